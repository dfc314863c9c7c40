package protocol

import (
	"bytes"
	"encoding/json"
)

// Head is an answer's head in JSON (docs/protocol.md):
// {"status":N,"headers":{...}}, plus "reason" and "raw_headers" (base64
// values that are not UTF-8) and "file" when needed. Ferry's workers send it,
// and so did roadrunner-http before 3.5.
type Head struct {
	Status     int       `json:"status"`
	Reason     string    `json:"reason"`
	Headers    HeaderMap `json:"headers"`
	RawHeaders HeaderMap `json:"raw_headers"`
	File       *File     `json:"file"`
}

// HeaderMap accepts [] too: PHP's json_encode writes an empty array that way.
type HeaderMap map[string][]string

func (h *HeaderMap) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "[]" {
		*h = nil
		return nil
	}
	return json.Unmarshal(b, (*map[string][]string)(h))
}

// EachHeader calls fn with each header of a JSON answer head, as both
// protocols' informational parts carry them.
func EachHeader(head []byte, fn func(k, v []byte) error) error {
	var a Head
	if err := json.Unmarshal(head, &a); err != nil {
		return err
	}
	for k, vs := range a.Headers {
		for _, v := range vs {
			if err := fn([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
	}
	return nil
}
