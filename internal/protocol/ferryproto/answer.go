package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/valyala/fasthttp"
)

// answer is the response context a worker sends (docs/protocol.md):
// {"status":N,"headers":{...}}, plus "reason" and "raw_headers" (base64 values
// that are not UTF-8) when needed.
type answer struct {
	Status     int         `json:"status"`
	Reason     string      `json:"reason"`
	Headers    headerMap   `json:"headers"`
	RawHeaders headerMap   `json:"raw_headers"`
	File       *fileAnswer `json:"file"`
}

// headerMap accepts [] too: PHP's json_encode writes an empty array that way.
type headerMap map[string][]string

func (h *headerMap) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "[]" {
		*h = nil
		return nil
	}
	return json.Unmarshal(b, (*map[string][]string)(h))
}

// writeAnswer turns a worker's answer into the response. Nothing a worker
// sends is trusted to be well formed: a header that would split the response
// or a status that is not final makes the answer a 502, whatever the SDK
// checked on its side.
func writeAnswer(resp *fasthttp.Response, ctx, body []byte) (*fileAnswer, error) {
	// Without fasthttp's default type, an empty ContentType() below means the
	// worker set none, and PHP's own default applies.
	resp.Header.SetNoDefaultContentType(true)
	var file *fileAnswer
	status, ok := scanAnswer(ctx, resp)
	if !ok {
		// Anything the fast scanner did not expect gets the full JSON decoder.
		resp.Header.Reset()
		resp.Header.SetNoDefaultContentType(true)
		var err error
		if status, file, err = decodeAnswer(ctx, resp); err != nil {
			return nil, err
		}
	}
	if status == 0 {
		status = fasthttp.StatusOK
	}
	if status < 200 || status > 599 {
		return nil, fmt.Errorf("response status %d is not a final status (200-599); a 1xx goes before the answer (php/worker: Response::earlyHints())", status)
	}
	if len(resp.Header.ContentType()) == 0 {
		resp.Header.SetContentType("text/html; charset=UTF-8") // PHP's default
	}
	resp.SetStatusCode(status)
	resp.SetBodyRaw(body)
	return file, nil
}

func decodeAnswer(ctx []byte, resp *fasthttp.Response) (int, *fileAnswer, error) {
	var a answer
	if len(ctx) > 0 {
		if err := json.Unmarshal(ctx, &a); err != nil {
			return 0, nil, fmt.Errorf("response context is not {\"status\",\"headers\"} JSON: %w (%.200q)", err, ctx)
		}
	}
	for k, vs := range a.Headers {
		for _, v := range vs {
			if err := addHeader(resp, []byte(k), []byte(v)); err != nil {
				return 0, nil, err
			}
		}
	}
	for k, vs := range a.RawHeaders {
		for _, v := range vs {
			raw, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return 0, nil, fmt.Errorf("raw_headers[%q]: %w", k, err)
			}
			if err := addHeader(resp, []byte(k), raw); err != nil {
				return 0, nil, err
			}
		}
	}
	if a.Reason != "" {
		if !validValue([]byte(a.Reason)) {
			return 0, nil, fmt.Errorf("response reason phrase %q holds a control character", a.Reason)
		}
		resp.Header.SetStatusMessage([]byte(a.Reason))
	}
	return a.Status, a.File, nil
}

// addHeader refuses what would corrupt the response framing: a name that is
// not an RFC 9110 token, a value with CR, LF or NUL.
func addHeader(resp *fasthttp.Response, k, v []byte) error {
	if !validName(k) {
		return fmt.Errorf("response header name %q is not a valid field name", k)
	}
	if !validValue(v) {
		return fmt.Errorf("response header %s: value %q holds CR, LF or NUL", k, v)
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

func validName(k []byte) bool {
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

func validValue(v []byte) bool {
	for _, c := range v {
		if c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}
