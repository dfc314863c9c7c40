package ferryproto

import (
	"strconv"
	"unicode/utf8"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/valyala/fasthttp"
)

// scanAnswer reads the exact shape PHP's json_encode produces for a response
// context, {"status":200,"headers":{"Name":["v1","v2"]}}, straight into the
// response headers without reflection or maps. It reports false on anything
// else, and the caller falls back to encoding/json.
func scanAnswer(b []byte, resp *fasthttp.Response) (int, bool) {
	s := scanner{b: b}
	status := 0
	if !s.lit('{') {
		return 0, false
	}
	if s.lit('}') {
		return 0, s.end()
	}
	for {
		key, ok := s.str()
		if !ok || !s.lit(':') {
			return 0, false
		}
		switch string(key) {
		case "status":
			n, ok := s.num()
			if !ok {
				return 0, false
			}
			status = n
		case "headers":
			if !s.headers(resp) {
				return 0, false
			}
		default:
			return 0, false
		}
		if s.lit('}') {
			return status, s.end()
		}
		if !s.lit(',') {
			return 0, false
		}
	}
}

type scanner struct {
	b   []byte
	i   int
	tmp []byte
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\t' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) lit(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) end() bool { s.ws(); return s.i == len(s.b) }

func (s *scanner) num() (int, bool) {
	s.ws()
	j := s.i
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	if j == s.i || j-s.i > 4 || (s.b[s.i] == '0' && j-s.i > 1) {
		return 0, false
	}
	n, _ := strconv.Atoi(string(s.b[s.i:j]))
	s.i = j
	return n, true
}

// str returns a JSON string's value; escapes are decoded into a scratch buffer
// valid until the next call.
func (s *scanner) str() ([]byte, bool) {
	if !s.lit('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

func (s *scanner) escaped(start int) ([]byte, bool) {
	out := append(s.tmp[:0], s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			s.tmp = out
			return out, true
		}
		if c < 0x20 {
			return nil, false
		}
		if c != '\\' {
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return nil, false
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			if s.i+4 > len(s.b) {
				return nil, false
			}
			r, err := strconv.ParseUint(string(s.b[s.i:s.i+4]), 16, 16)
			if err != nil || (r >= 0xd800 && r < 0xe000) { // surrogate pairs: leave to encoding/json
				return nil, false
			}
			out = utf8.AppendRune(out, rune(r))
			s.i += 4
		default:
			return nil, false
		}
	}
	return nil, false
}

func (s *scanner) headers(resp *fasthttp.Response) bool {
	var name [64]byte
	if s.lit('[') { // PHP encodes an empty array as []
		return s.lit(']')
	}
	if !s.lit('{') {
		return false
	}
	if s.lit('}') {
		return true
	}
	for {
		k, ok := s.str()
		if !ok || !s.lit(':') || !s.lit('[') {
			return false
		}
		// k may live in the scratch buffer the values are decoded into; a
		// name up to 64 bytes is copied without an allocation.
		key := append(name[:0], k...)
		if !s.lit(']') {
			for {
				v, ok := s.str()
				// What protocol.CheckHeader refuses goes to the decoder,
				// which names the fault.
				if !ok || protocol.AddHeader(resp, key, v) != nil {
					return false
				}
				if s.lit(']') {
					break
				}
				if !s.lit(',') {
					return false
				}
			}
		}
		if s.lit('}') {
			return true
		}
		if !s.lit(',') {
			return false
		}
	}
}
