package extract

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// legacy is a page's text in one legacy charset, with bytes the encoder
// must produce, so the test is known to feed real legacy bytes.
type legacy struct {
	name  string // label as pages declare it
	enc   encoding.Encoding
	title string
	text  string
	// sample is a prefix of text and sampleBytes its bytes in the charset.
	sample      string
	sampleBytes []byte
}

var legacyPages = []legacy{
	{
		name: "Shift_JIS", enc: japanese.ShiftJIS,
		title: "日本の天気", text: "明日は全国的に晴れるでしょう。",
		sample: "明日", sampleBytes: []byte{0x96, 0xbe, 0x93, 0xfa},
	},
	{
		name: "windows-1251", enc: charmap.Windows1251,
		title: "Погода в Москве", text: "Завтра будет солнечно и тепло.",
		sample: "Завтра", sampleBytes: []byte{0xc7, 0xe0, 0xe2, 0xf2, 0xf0, 0xe0},
	},
	{
		name: "GB18030", enc: simplifiedchinese.GB18030,
		title: "北京天气预报", text: "明天全国大部分地区天气晴朗。",
		sample: "明天", sampleBytes: []byte{0xc3, 0xf7, 0xcc, 0xec},
	},
}

// encodePage renders a page around title and text, with head placed in
// its head, and encodes it in enc.
func encodePage(t *testing.T, enc encoding.Encoding, head, title, text string) []byte {
	t.Helper()
	page := fmt.Sprintf("<html><head>%s<title>%s</title></head><body><article><p>%s</p></article></body></html>", head, title, text)
	b, err := enc.NewEncoder().Bytes([]byte(page))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

func TestLegacyCharsets(t *testing.T) {
	t.Parallel()
	for _, cs := range legacyPages {
		b, err := cs.enc.NewEncoder().Bytes([]byte(cs.sample))
		if err != nil || !bytes.Equal(b, cs.sampleBytes) {
			t.Fatalf("%s: %q encodes to % x, %v; want % x", cs.name, cs.sample, b, err, cs.sampleBytes)
		}
		declarations := []struct {
			name        string
			head        string
			contentType string
		}{
			{name: "meta charset", head: `<meta charset="` + cs.name + `">`},
			{name: "meta http-equiv", head: `<meta http-equiv="Content-Type" content="text/html; charset=` + cs.name + `">`},
			{name: "content type", contentType: "text/html; charset=" + cs.name},
			{name: "content type over a wrong meta", head: `<meta charset="iso-8859-2">`, contentType: "text/html; charset=" + cs.name},
		}
		for _, decl := range declarations {
			t.Run(cs.name+"/"+decl.name, func(t *testing.T) {
				t.Parallel()
				body := encodePage(t, cs.enc, decl.head, cs.title, cs.text)
				if !bytes.Contains(body, cs.sampleBytes) {
					t.Fatalf("page lacks the sample bytes")
				}
				d := run(t, &internalv1.ExtractRequest{Html: body, Url: pageURLForTests, ContentType: decl.contentType})
				if d.GetTitle() != cs.title {
					t.Errorf("title = %q, want %q", d.GetTitle(), cs.title)
				}
				if d.GetMarkdown() != cs.text {
					t.Errorf("markdown = %q, want %q", d.GetMarkdown(), cs.text)
				}
			})
		}
	}
}

func TestUndeclaredLegacyFallsBackToWindows1252(t *testing.T) {
	t.Parallel()
	// x/net's sniffing tells UTF-8 from windows-1252 and nothing else, so
	// undeclared windows-1251 reads as windows-1252: the same bytes, other
	// letters. This pins that limit; a detector would change it.
	cs := legacyPages[1]
	body := encodePage(t, cs.enc, "", cs.title, cs.text)
	d := run(t, &internalv1.ExtractRequest{Html: body, Url: pageURLForTests})
	wantTitle := asWindows1252(t, cs.enc, cs.title)
	wantText := asWindows1252(t, cs.enc, cs.text)
	if d.GetTitle() != wantTitle || d.GetMarkdown() != wantText {
		t.Errorf("title %q, markdown %q; want %q, %q", d.GetTitle(), d.GetMarkdown(), wantTitle, wantText)
	}
	if wantTitle != "Ïîãîäà â Ìîñêâå" {
		t.Errorf("windows-1252 reading = %q", wantTitle)
	}
}

func asWindows1252(t *testing.T, enc encoding.Encoding, s string) string {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	out, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestDecode(t *testing.T) {
	t.Parallel()
	sjis := func(s string) string {
		b, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	utf16 := func(order unicode.Endianness, s string) string {
		b, err := unicode.UTF16(order, unicode.IgnoreBOM).NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Long enough to push what follows past the prescan's 1024 bytes.
	filler := `<link rel="preload" href="/assets/app.css" as="style">` + strings.Repeat(`<meta property="og:x" content="filler">`, 30)
	tests := []struct {
		name        string
		body        string
		contentType string
		want        string
	}{
		{name: "utf-8 bom", body: "\xef\xbb\xbfcafé", want: "café"},
		{name: "utf-16le bom", body: "\xff\xfe" + utf16(unicode.LittleEndian, "<p>café</p>"), want: "<p>café</p>"},
		{name: "utf-16be bom", body: "\xfe\xff" + utf16(unicode.BigEndian, "<p>日本</p>"), want: "<p>日本</p>"},
		{name: "bom over content type", body: "\xef\xbb\xbfcafé", contentType: "text/html; charset=shift_jis", want: "café"},
		{name: "utf-16 content type without bom", body: utf16(unicode.LittleEndian, "<p>hi</p>"), contentType: "text/html; charset=utf-16le", want: "<p>hi</p>"},
		{name: "meta utf-16 means utf-8", body: `<meta charset="utf-16"><p>café</p>`, want: `<meta charset="utf-16"><p>café</p>`},
		{name: "late meta in head", body: "<head>" + filler + `<meta charset="shift_jis"><title>` + sjis("天気") + "</title>", want: "<head>" + filler + `<meta charset="shift_jis"><title>天気</title>`},
		{name: "late meta after the head ignored", body: "<head>" + filler + "</head><body><p>x</p><meta charset=\"windows-1251\">\xe9", want: "<head>" + filler + "</head><body><p>x</p><meta charset=\"windows-1251\">é"},
		{name: "meta in the body within 1024 bytes", body: "<body><p>x</p><meta charset=\"windows-1251\">\xe9", want: "<body><p>x</p><meta charset=\"windows-1251\">й"},
		{name: "valid utf-8 kept over a content type", body: "<p>café</p>", contentType: "text/html; charset=iso-8859-1", want: "<p>café</p>"},
		{name: "seven-bit iso-2022-jp decoded", body: "<p>\x1b$BF|K\\\x1b(B</p>", contentType: "text/html; charset=iso-2022-jp", want: "<p>日本</p>"},
		{name: "utf-8 with a stray byte", body: "<p>café crème brûlée \xff à la carte</p>", want: "<p>café crème brûlée \uFFFD à la carte</p>"},
		{name: "undeclared latin-1", body: "<p>caf\xe9</p>", want: "<p>café</p>"},
		{name: "xml declaration", body: `<?xml version="1.0" encoding="windows-1251"?><rss>` + "\xcf\xf0\xe8\xe2\xe5\xf2</rss>", contentType: "application/rss+xml", want: `<?xml version="1.0" encoding="windows-1251"?><rss>Привет</rss>`},
		{name: "xml declaration ignored for html", body: `<?xml version="1.0" encoding="windows-1251"?><p>` + "\xe9</p>", want: `<?xml version="1.0" encoding="windows-1251"?><p>é</p>`},
		{name: "unknown label ignored", body: "<p>caf\xe9</p>", contentType: "text/html; charset=x-unheard-of", want: "<p>café</p>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(decode([]byte(tt.body), tt.contentType)); got != tt.want {
				t.Errorf("decode = %q, want %q", got, tt.want)
			}
		})
	}
}
