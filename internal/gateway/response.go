package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/valyala/fasthttp"
)

// answer is the response context a worker sends: {"status":N,"headers":{...}}.
type answer struct {
	Status  int       `json:"status"`
	Headers headerMap `json:"headers"`
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

func writeAnswer(resp *fasthttp.Response, ctx, body []byte) error {
	// Without fasthttp's default type, an empty ContentType() below means the
	// worker set none, and PHP's own default applies.
	resp.Header.SetNoDefaultContentType(true)
	status, ok := scanAnswer(ctx, resp)
	if !ok {
		// Anything the fast scanner did not expect gets the full JSON decoder.
		resp.Header.Reset()
		resp.Header.SetNoDefaultContentType(true)
		var a answer
		if len(ctx) > 0 {
			if err := json.Unmarshal(ctx, &a); err != nil {
				return fmt.Errorf("response context is not {\"status\",\"headers\"} JSON: %w (%.200q)", err, ctx)
			}
		}
		status = a.Status
		for k, vs := range a.Headers {
			for _, v := range vs {
				resp.Header.Add(k, v)
			}
		}
	}
	if status == 0 {
		status = fasthttp.StatusOK
	}
	if status < 100 || status > 999 {
		return fmt.Errorf("response status %d out of range", status)
	}
	if len(resp.Header.ContentType()) == 0 {
		resp.Header.SetContentType("text/html; charset=UTF-8") // PHP's default
	}
	resp.SetStatusCode(status)
	resp.SetBodyRaw(body)
	return nil
}
