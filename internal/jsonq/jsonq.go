// Package jsonq appends JSON string literals to byte slices, for the JSON the
// hot paths build by hand (RoadRunner request trees, access log lines).
package jsonq

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append quotes s as a JSON string. Bytes that are not UTF-8 become U+FFFD,
// as encoding/json does, so whoever reads it (PHP's json_decode, a log
// shipper) accepts the whole; control bytes and DEL are \u escapes.
func Append[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
