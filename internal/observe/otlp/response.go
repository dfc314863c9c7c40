package otlp

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

var errMalformed = errors.New("malformed protobuf")

// PartialSuccess reads an ExportTraceServiceResponse: how many spans of an
// accepted export the collector rejected anyway, and why. An empty body is
// full success.
func PartialSuccess(b []byte) (rejected int64, msg string, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		if num != 1 || typ != protowire.BytesType { // partial_success
			return nil
		}
		return fields(v, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
			switch {
			case num == 1 && typ == protowire.VarintType: // rejected_spans
				rejected = int64(n)
			case num == 2 && typ == protowire.BytesType: // error_message
				msg = string(v)
			}
			return nil
		})
	})
	return rejected, msg, err
}

// StatusMessage reads the message of the google.rpc.Status a collector
// answers a failed export with.
func StatusMessage(b []byte) (string, error) {
	var msg string
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		if num == 2 && typ == protowire.BytesType {
			msg = string(v)
		}
		return nil
	})
	return msg, err
}

// fields calls f with each field of the message in b: a varint's value in
// n, the bytes of a length-delimited field in v. Fields of other wire types
// are skipped; a later field of the same number wins, as in protobuf.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return errMalformed
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return errMalformed
		}
		b = b[l:]
		if typ == protowire.VarintType || typ == protowire.BytesType {
			if err := f(num, typ, v, n); err != nil {
				return err
			}
		}
	}
	return nil
}
