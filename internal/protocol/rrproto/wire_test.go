package rrproto

import (
	"bytes"
	"fmt"
	"testing"
)

// Worked out by hand from the protobuf encoding rules: Response{status: 200,
// headers: {"A": ["b"]}}: tag 1 varint 200, then tag 2 holding the map entry
// {1: "A", 2: HeaderValue{1: "b"}}.
var responseVector = []byte{0x08, 0xC8, 0x01, 0x12, 0x08, 0x0A, 0x01, 'A', 0x12, 0x03, 0x0A, 0x01, 'b'}

func TestResponseVector(t *testing.T) {
	if got := AppendResponse(nil, 200, map[string][]string{"A": {"b"}}); !bytes.Equal(got, responseVector) {
		t.Fatalf("encoded % x, want % x", got, responseVector)
	}
	var seen []string
	st, err := DecodeResponse(responseVector, func(k, v []byte) error {
		seen = append(seen, string(k)+"="+string(v))
		return nil
	})
	if err != nil || st != 200 || fmt.Sprint(seen) != "[A=b]" {
		t.Fatalf("decoded %d %v %v", st, seen, err)
	}
}

func TestResponseSkipsUnknownAndRejectsTruncated(t *testing.T) {
	// An unknown field 7 (fixed32) before the known ones is skipped.
	msg := append([]byte{0x3D, 1, 2, 3, 4}, responseVector...)
	if st, err := DecodeResponse(msg, func(k, v []byte) error { return nil }); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	for i := 1; i < len(responseVector); i++ {
		if i == 3 {
			continue // a message ending after the status is complete
		}
		if _, err := DecodeResponse(responseVector[:i], func(k, v []byte) error { return nil }); err == nil {
			t.Errorf("truncated at %d: no error", i)
		}
	}
}

func TestRequestRoundTrip(t *testing.T) {
	var b []byte
	b = AppendString(b, ReqRemoteAddr, []byte("10.0.0.1"))
	b = AppendString(b, ReqProtocol, []byte("HTTP/1.1"))
	b = AppendString(b, ReqMethod, []byte("POST"))
	b = AppendString(b, ReqURI, []byte("http://h/p?q=1"))
	b = AppendEntry(b, ReqHeader, []byte("X-Multi"), []byte("one"), []byte("two"))
	b = AppendEntry(b, ReqHeader, []byte("Empty"), []byte(""))
	b = AppendEntry(b, ReqCookies, []byte("sid"), []byte("abc"))
	b = AppendString(b, ReqRawQuery, []byte("q=1"))
	b = AppendBool(b, ReqParsed, true)
	b = AppendString(b, ReqUploads, []byte(`{"f":{}}`))
	r, err := DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s|%s|%s|%s|%s|%v|%s|%v|%v", r.RemoteAddr, r.Protocol, r.Method, r.URI, r.RawQuery, r.Parsed, r.Uploads, r.Header, r.Cookies)
	want := `10.0.0.1|HTTP/1.1|POST|http://h/p?q=1|q=1|true|{"f":{}}|map[Empty:[] X-Multi:[one two]]|map[sid:[abc]]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
