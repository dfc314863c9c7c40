package protocol

import (
	"fmt"

	"github.com/valyala/fasthttp"
)

// CheckHeader is the one check every answer header passes, whatever protocol
// and decoding path it came by: nothing a worker sends is trusted to be well
// formed, and a name that is not an RFC 9110 token or a value with CR, LF or
// NUL would split or corrupt the response.
func CheckHeader(k, v []byte) error {
	// The messages take copies: k and v handed to fmt would escape, and the
	// scanner's name buffer with them, on every answer rather than on a bad one.
	if !ValidName(k) {
		return fmt.Errorf("response header name %q is not a valid field name", string(k))
	}
	if !ValidValue(v) {
		return fmt.Errorf("response header %s: value %q holds CR, LF or NUL", string(k), string(v))
	}
	return nil
}

// AddHeader adds a header to resp once CheckHeader has passed it.
func AddHeader(resp *fasthttp.Response, k, v []byte) error {
	if err := CheckHeader(k, v); err != nil {
		return err
	}
	resp.Header.AddBytesKV(k, v)
	return nil
}

var tchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-32] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return
}()

// ValidName reports whether k is an RFC 9110 token.
func ValidName(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !tchar[c] {
			return false
		}
	}
	return true
}

// ValidValue reports whether v holds none of CR, LF and NUL; a reason phrase
// is held to it too.
func ValidValue(v []byte) bool {
	for _, c := range v {
		if c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}
