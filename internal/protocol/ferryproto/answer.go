package ferryproto

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/valyala/fasthttp"
)

// WriteAnswer turns a worker's answer into the response. Nothing a worker
// sends is trusted to be well formed: a header that would split the response
// or a status that is not final makes the answer a 502, whatever the SDK
// checked on its side.
func (Protocol) WriteAnswer(resp *fasthttp.Response, ctx, body []byte) (*protocol.File, error) {
	// Without fasthttp's default type, an empty ContentType() below means the
	// worker set none, and PHP's own default applies.
	resp.Header.SetNoDefaultContentType(true)
	var file *protocol.File
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

func decodeAnswer(ctx []byte, resp *fasthttp.Response) (int, *protocol.File, error) {
	var a protocol.Head
	if len(ctx) > 0 {
		if err := json.Unmarshal(ctx, &a); err != nil {
			return 0, nil, fmt.Errorf("response context is not {\"status\",\"headers\"} JSON: %w (%.200q)", err, ctx)
		}
	}
	for k, vs := range a.Headers {
		for _, v := range vs {
			if err := protocol.AddHeader(resp, []byte(k), []byte(v)); err != nil {
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
			if err := protocol.AddHeader(resp, []byte(k), raw); err != nil {
				return 0, nil, err
			}
		}
	}
	if a.Reason != "" {
		if !protocol.ValidValue([]byte(a.Reason)) {
			return 0, nil, fmt.Errorf("response reason phrase %q holds a control character", a.Reason)
		}
		resp.Header.SetStatusMessage([]byte(a.Reason))
	}
	return a.Status, a.File, nil
}

// PartStatus reads the status of a streamed answer's part head; 0 when it
// has none, 200 when it names none.
func (Protocol) PartStatus(head []byte) (int, error) {
	if len(head) == 0 {
		return 0, nil
	}
	var a protocol.Head
	if err := json.Unmarshal(head, &a); err != nil {
		return 0, fmt.Errorf("response context is not {\"status\",\"headers\"} JSON: %w (%.200q)", err, head)
	}
	if a.Status == 0 {
		return 200, nil
	}
	if a.Status < 100 || a.Status > 599 {
		return 0, fmt.Errorf("response status %d is not within 100-599", a.Status)
	}
	return a.Status, nil
}

// PartHeaders calls fn with each header of an informational part's head.
func (Protocol) PartHeaders(head []byte, fn func(k, v []byte) error) error {
	return protocol.EachHeader(head, fn)
}
