package rrproto

import (
	"maps"
	"reflect"
	"testing"
)

// Whatever a worker writes, decoding never panics; what decodes encodes back
// to a message that decodes to the same status and headers.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(AppendResponse(nil, 201, map[string][]string{"X-A": {"1", "2"}, "Set-Cookie": {"a=b"}}))
	f.Add([]byte{0x08, 0xc8, 0x01})
	f.Add([]byte{0x12, 0x03, 0x0a, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		headers := map[string][]string{}
		status, err := DecodeResponse(b, func(k, v []byte) error {
			headers[string(k)] = append(headers[string(k)], string(v))
			return nil
		})
		if err != nil {
			return
		}
		again := map[string][]string{}
		status2, err := DecodeResponse(AppendResponse(nil, status, headers), func(k, v []byte) error {
			again[string(k)] = append(again[string(k)], string(v))
			return nil
		})
		if err != nil || status2 != status || !maps.EqualFunc(again, headers, func(a, b []string) bool { return reflect.DeepEqual(a, b) }) {
			t.Fatalf("round trip: %d %v -> %d %v (%v)", status, headers, status2, again, err)
		}
	})
}
