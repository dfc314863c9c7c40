package rrproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/valyala/fasthttp"
)

// WriteAnswer turns a RoadRunner answer (or a streamed one's head, with
// no body) into the response.
func (*Protocol) WriteAnswer(resp *fasthttp.Response, head, body []byte) (*protocol.File, error) {
	resp.Header.SetNoDefaultContentType(true)
	status, err := decodeHead(head, resp)
	if err != nil {
		return nil, err
	}
	if status == 0 {
		status = fasthttp.StatusOK
	}
	if status < 200 || status > 599 {
		return nil, fmt.Errorf("response status %d is not a final status (200-599)", status)
	}
	if len(resp.Header.ContentType()) == 0 && len(body) > 0 {
		// What net/http, and so RoadRunner, does for an answer without one.
		resp.Header.SetContentType(http.DetectContentType(body))
	}
	resp.SetStatusCode(status)
	resp.SetBodyRaw(body)
	return nil, nil
}

// isJSONHead tells the two answer encodings apart: a Response message cannot
// start with '{' (field 15, wire type 3, is not in it).
func isJSONHead(ctx []byte) bool {
	t := bytes.TrimLeft(ctx, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// PartStatus reads the status of a streamed answer's part head; 0 when it
// has none.
func (*Protocol) PartStatus(head []byte) (int, error) {
	if len(head) == 0 {
		return 0, nil
	}
	st, err := status(head)
	if err != nil {
		return 0, fmt.Errorf("response context is not an http.v1.Response: %w", err)
	}
	if st < 100 || st > 599 {
		return 0, fmt.Errorf("response status %d is not within 100-599", st)
	}
	return int(st), nil
}

// PartHeaders calls fn with each header of an informational part's head.
func (*Protocol) PartHeaders(head []byte, fn func(k, v []byte) error) error {
	if isJSONHead(head) {
		return protocol.EachHeader(head, fn)
	}
	_, err := DecodeResponse(head, fn)
	return err
}

func status(ctx []byte) (int64, error) {
	if isJSONHead(ctx) {
		var a protocol.Head
		if err := json.Unmarshal(ctx, &a); err != nil {
			return 0, err
		}
		return int64(a.Status), nil
	}
	return DecodeResponse(ctx, func(k, v []byte) error { return nil })
}

func decodeHead(ctx []byte, resp *fasthttp.Response) (int, error) {
	if isJSONHead(ctx) {
		var a protocol.Head
		if err := json.Unmarshal(ctx, &a); err != nil {
			return 0, fmt.Errorf("response context is not {\"status\",\"headers\"} JSON: %w (%.200q)", err, ctx)
		}
		for k, vs := range a.Headers {
			for _, v := range vs {
				if err := protocol.AddHeader(resp, []byte(k), []byte(v)); err != nil {
					return 0, err
				}
			}
		}
		return a.Status, nil
	}
	st, err := DecodeResponse(ctx, func(k, v []byte) error { return protocol.AddHeader(resp, k, v) })
	if err != nil {
		return 0, fmt.Errorf("response context is not an http.v1.Response: %w", err)
	}
	if st < 0 || st > 999 {
		return 0, fmt.Errorf("response status %d is not a final status (200-599)", st)
	}
	return int(st), nil
}
