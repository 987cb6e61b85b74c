package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical writes v as canonical JSON, the JSON Canonicalization Scheme
// of RFC 8785, so that a digest of it is the same whoever computes it:
//
//   - no white space; objects' members sorted by their names compared as
//     UTF-16 code units (so U+1F600 sorts before U+FB33);
//   - strings in UTF-8, escaping only '"', '\\' and U+0000-U+001F, the
//     latter as \b \t \n \f \r or \u00xx (lower-case hex);
//   - numbers as IEEE 754 doubles written as ECMAScript writes them
//     (shortest round-trip digits; plain notation from 1e-6 to below 1e21,
//     otherwise d.ddde±x; -0 is 0); NaN and infinities are refused;
//   - true, false, null as themselves.
//
// v is a value as encoding/json decodes it (map[string]any, []any, string,
// float64 or json.Number, bool, nil); other Go values are first encoded
// with encoding/json and decoded again.
func Canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := canon(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Digest is the lower-case hex SHA-256 of v's canonical JSON.
func Digest(v any) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

func canon(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		return canonString(b, x)
	case float64:
		return canonNumber(b, x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return fmt.Errorf("canonical JSON: number %s: %w", x, err)
		}
		return canonNumber(b, f)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canon(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonString(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := canon(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		// A Go value: through encoding/json to the decoded forms above.
		raw, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("canonical JSON: %w", err)
		}
		var back any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&back); err != nil {
			return fmt.Errorf("canonical JSON: %w", err)
		}
		return canon(b, back)
	}
	return nil
}

func lessUTF16(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

func canonString(b *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return errors.New("canonical JSON: a string is not valid UTF-8")
	}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return nil
}

func canonNumber(b *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return errors.New("canonical JSON: NaN and infinities are not JSON")
	}
	if f == 0 {
		b.WriteByte('0') // -0 too
		return nil
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		// ECMAScript: exponent form, no leading zeros in the exponent,
		// an explicit '+'.
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		b.WriteString(mant + "e" + string(sign) + exp)
		return nil
	}
	b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
	return nil
}
