package host

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// The number vectors of RFC 8785, Appendix B: IEEE 754 bits and the text
// ECMAScript writes for them.
func TestCanonicalNumbers(t *testing.T) {
	vectors := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, v := range vectors {
		got, err := Canonical(math.Float64frombits(v.bits))
		if err != nil || string(got) != v.want {
			t.Errorf("%016x: %s, %v; want %s", v.bits, got, err, v.want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := Canonical(bad); err == nil {
			t.Errorf("%v was written", bad)
		}
	}
}

// Fixed vectors: the canonical text and its digest. The digests were
// computed apart, with Python's hashlib over the texts below.
func TestCanonicalAndDigestVectors(t *testing.T) {
	vectors := []struct {
		name, in, canonical, digest string
	}{
		{"null", `null`, `null`, "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"},
		{"white space", "{ \"a\" :\n \"x\" }", `{"a":"x"}`, "bac82bcae3ff0e486fd02d6dce53dc6444bcbd21f6ab5dea0a69e86e8b723b7f"},
		{"sorting (RFC 8785 3.2.3)",
			`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
			"5e321556d22018a9656991a9e94f77ec175fa193e52a2429d312f8419ec8b08c"},
		{"extraction", `{"tags":["a","b"],"price":9.50,"name":"Widget"}`, `{"name":"Widget","price":9.5,"tags":["a","b"]}`, "fc0b7edc7dcc4e1407f691d3fa18b38cec2e95d179b9b944af75e50b3e4759a2"},
	}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			var in any
			dec := json.NewDecoder(strings.NewReader(v.in))
			dec.UseNumber()
			if err := dec.Decode(&in); err != nil {
				t.Fatal(err)
			}
			got, err := Canonical(in)
			if err != nil || string(got) != v.canonical {
				t.Fatalf("canonical %s, %v; want %s", got, err, v.canonical)
			}
			d, err := Digest(in)
			if err != nil || d != v.digest {
				t.Fatalf("digest %s, %v; want %s", d, err, v.digest)
			}
		})
	}
}

func TestCanonicalStrings(t *testing.T) {
	got, err := Canonical("q\"b\\s\b\t\n\f\r\x01\x1f</>&\u2028é")
	want := `"q\"b\\s\b\t\n\f\r\u0001\u001f</>&` + "\u2028é\""
	if err != nil || string(got) != want {
		t.Fatalf("%s, %v; want %s", got, err, want)
	}
	if _, err := Canonical("\xff"); err == nil {
		t.Fatal("invalid UTF-8 was written")
	}
	// Go values go through encoding/json first.
	got, err = Canonical(struct {
		B int    `json:"b"`
		A string `json:"a"`
	}{B: 2, A: "x"})
	if err != nil || string(got) != `{"a":"x","b":2}` {
		t.Fatalf("struct: %s, %v", got, err)
	}
}
