// The two messages of RoadRunner's HTTP
// worker protocol, http.v1.Request and http.v1.Response, straight on the wire
// format: the field numbers are those of the published
// roadrunner-server/api proto/http/v1/http.proto:
//
//	Request:     1 remote_addr, 2 protocol, 3 method, 4 uri,
//	             5 header map<string,HeaderValue>, 6 cookies (same),
//	             7 raw_query, 8 parsed bool, 9 uploads bytes (JSON),
//	             10 attributes map<string,HeaderValue>
//	Response:    1 status int64, 2 headers map<string,HeaderValue>
//	HeaderValue: 1 repeated string value
//
// A map entry is a nested message with the key as field 1 and the value as
// field 2. Writing the bytes directly spares building a message tree per
// request and a reflection-driven marshal.

package rrproto

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Request fields.
const (
	ReqRemoteAddr protowire.Number = 1
	ReqProtocol   protowire.Number = 2
	ReqMethod     protowire.Number = 3
	ReqURI        protowire.Number = 4
	ReqHeader     protowire.Number = 5
	ReqCookies    protowire.Number = 6
	ReqRawQuery   protowire.Number = 7
	ReqParsed     protowire.Number = 8
	ReqUploads    protowire.Number = 9
	ReqAttributes protowire.Number = 10
)

// Response fields.
const (
	RespStatus  protowire.Number = 1
	RespHeaders protowire.Number = 2
)

// AppendString appends a string field; proto3 leaves empty strings out.
func AppendString(b []byte, n protowire.Number, s []byte) []byte {
	if len(s) == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, s)
}

// AppendBool appends a bool field when true.
func AppendBool(b []byte, n protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, 1)
}

// AppendEntry appends one map<string,HeaderValue> entry: key and its values.
func AppendEntry(b []byte, n protowire.Number, key []byte, values ...[]byte) []byte {
	hv := 0
	for _, v := range values {
		hv += protowire.SizeTag(1) + protowire.SizeBytes(len(v))
	}
	entry := protowire.SizeTag(1) + protowire.SizeBytes(len(key)) + protowire.SizeTag(2) + protowire.SizeBytes(hv)
	b = protowire.AppendTag(b, n, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(entry))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, key)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(hv))
	for _, v := range values {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, v)
	}
	return b
}

// AppendResponse encodes a Response; used by tests and tools.
func AppendResponse(b []byte, status int64, headers map[string][]string) []byte {
	if status != 0 {
		b = protowire.AppendTag(b, RespStatus, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(status))
	}
	for k, vs := range headers {
		vals := make([][]byte, len(vs))
		for i, v := range vs {
			vals[i] = []byte(v)
		}
		b = AppendEntry(b, RespHeaders, []byte(k), vals...)
	}
	return b
}

var errTruncated = errors.New("rrproto: truncated or malformed message")

// fields calls f for every field of a message: v is a length-delimited
// field's content, x a varint field's value. Fields of other wire types are
// skipped, as protobuf asks of a reader that does not know them.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errTruncated
		}
		b = b[n:]
		var (
			v []byte
			x uint64
		)
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errTruncated
		}
		b = b[n:]
		if typ == protowire.BytesType || typ == protowire.VarintType {
			if err := f(num, typ, v, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeResponse reads a Response, calling header for every header value in
// the order the message holds them. Unknown fields are skipped.
func DecodeResponse(b []byte, header func(k, v []byte) error) (status int64, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == RespStatus && typ == protowire.VarintType:
			status = int64(x)
		case num == RespHeaders && typ == protowire.BytesType:
			return decodeEntry(v, header)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return status, nil
}

// decodeEntry reads one map entry; the key may come after the value, so the
// values are collected first.
func decodeEntry(b []byte, each func(k, v []byte) error) error {
	var key, values []byte
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ == protowire.BytesType && num == 1 {
			key = v
		} else if typ == protowire.BytesType && num == 2 {
			values = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fields(values, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		return each(key, v)
	})
}

// Request is a decoded http.v1.Request, for tests and tools; the gateway
// encodes without it.
type Request struct {
	RemoteAddr, Protocol, Method, URI, RawQuery string
	Header, Cookies, Attributes                 map[string][]string
	Parsed                                      bool
	Uploads                                     []byte
}

// DecodeRequest parses a Request.
func DecodeRequest(b []byte) (*Request, error) {
	r := &Request{Header: map[string][]string{}, Cookies: map[string][]string{}, Attributes: map[string][]string{}}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		if num == ReqParsed && typ == protowire.VarintType {
			r.Parsed = x != 0
			return nil
		}
		if typ != protowire.BytesType {
			return fmt.Errorf("rrproto: field %d has wire type %d", num, typ)
		}
		add := func(m map[string][]string) error {
			return decodeEntry(v, func(k, x []byte) error {
				m[string(k)] = append(m[string(k)], string(x))
				return nil
			})
		}
		switch num {
		case ReqRemoteAddr:
			r.RemoteAddr = string(v)
		case ReqProtocol:
			r.Protocol = string(v)
		case ReqMethod:
			r.Method = string(v)
		case ReqURI:
			r.URI = string(v)
		case ReqRawQuery:
			r.RawQuery = string(v)
		case ReqUploads:
			r.Uploads = append([]byte(nil), v...)
		case ReqHeader:
			return add(r.Header)
		case ReqCookies:
			return add(r.Cookies)
		case ReqAttributes:
			return add(r.Attributes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
