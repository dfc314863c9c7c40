// Package otlp sends finished spans to an OpenTelemetry collector over
// OTLP/HTTP with protobuf bodies: the few messages a server span needs,
// written with protowire, batched behind a bounded queue that drops rather
// than blocks. The OpenTelemetry SDK did this job at the cost of 9 MB of
// binary (grpc and grpc-gateway linked through its HTTP exporter) for one
// span per request.
package otlp

import (
	"math"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Span is a finished span as OTLP carries it.
type Span struct {
	TraceID    [16]byte
	SpanID     [8]byte
	ParentID   [8]byte // zero: a root span
	TraceState string
	// Flags are the W3C trace flags in the low byte and the
	// SPAN_FLAGS_CONTEXT_* bits above them.
	Flags      uint32
	Name       string
	Kind       Kind
	Start, End int64 // Unix nanoseconds
	Attrs      []KeyValue
	Status     StatusCode
	StatusMsg  string
}

// Kind is the OTLP Span.SpanKind.
type Kind int32

const KindServer Kind = 2

// StatusCode is the OTLP Status.StatusCode.
type StatusCode int32

const StatusError StatusCode = 2

// The SpanFlags bits above the W3C trace flags.
const (
	FlagHasIsRemote uint32 = 0x100 // whether the parent is remote is known
	FlagIsRemote    uint32 = 0x200 // the parent came from another process
)

// KeyValue is an attribute with a string, integer or double value.
type KeyValue struct {
	Key  string
	kind byte
	s    string
	n    int64
	f    float64
}

// String makes a string attribute. Protobuf strings are UTF-8, and a
// collector refuses a whole batch for one that is not: a client's invalid
// bytes (a path of %ff) become U+FFFD here.
func String(k, v string) KeyValue { return KeyValue{Key: ValidUTF8(k), kind: 's', s: ValidUTF8(v)} }

func Int(k string, v int) KeyValue       { return KeyValue{Key: ValidUTF8(k), kind: 'i', n: int64(v)} }
func Float(k string, v float64) KeyValue { return KeyValue{Key: ValidUTF8(k), kind: 'f', f: v} }

// ValidUTF8 returns s, or a copy with each invalid byte sequence replaced.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Field numbers of opentelemetry/proto: collector/trace/v1/trace_service.proto,
// trace/v1/trace.proto, common/v1/common.proto and resource/v1/resource.proto.
const (
	fRequestResourceSpans = 1 // ExportTraceServiceRequest

	fResourceSpansResource   = 1
	fResourceSpansScopeSpans = 2
	fResourceAttributes      = 1
	fScopeSpansScope         = 1
	fScopeSpansSpans         = 2
	fScopeName               = 1

	fSpanTraceID    = 1
	fSpanSpanID     = 2
	fSpanTraceState = 3
	fSpanParentID   = 4
	fSpanName       = 5
	fSpanKind       = 6
	fSpanStart      = 7
	fSpanEnd        = 8
	fSpanAttributes = 9
	fSpanStatus     = 15
	fSpanFlags      = 16
	fStatusMessage  = 2
	fStatusCode     = 3

	fKeyValueKey   = 1
	fKeyValueValue = 2
	fAnyString     = 1
	fAnyInt        = 3
	fAnyDouble     = 4
)

// AppendRequest appends an ExportTraceServiceRequest holding spans, made by
// the instrumentation scope named scope, for the resource with the given
// attributes. Sizes are computed before each nested message so that every
// byte is written once, in place.
func AppendRequest(b []byte, resource []KeyValue, scope string, spans []*Span) []byte {
	res := sizeAttrs(fResourceAttributes, resource)
	sc := sizeString(fScopeName, scope)
	ss := sizeMsg(fScopeSpansScope, sc)
	for _, s := range spans {
		ss += sizeMsg(fScopeSpansSpans, sizeSpan(s))
	}
	rs := sizeMsg(fResourceSpansResource, res) + sizeMsg(fResourceSpansScopeSpans, ss)

	b = appendMsgHead(b, fRequestResourceSpans, rs)
	b = appendMsgHead(b, fResourceSpansResource, res)
	b = appendAttrs(b, fResourceAttributes, resource)
	b = appendMsgHead(b, fResourceSpansScopeSpans, ss)
	b = appendMsgHead(b, fScopeSpansScope, sc)
	b = appendString(b, fScopeName, scope)
	for _, s := range spans {
		b = appendMsgHead(b, fScopeSpansSpans, sizeSpan(s))
		b = appendSpan(b, s)
	}
	return b
}

func sizeSpan(s *Span) int {
	n := sizeBytes(fSpanTraceID, len(s.TraceID)) + sizeBytes(fSpanSpanID, len(s.SpanID)) +
		sizeString(fSpanTraceState, s.TraceState) + sizeString(fSpanName, s.Name) +
		sizeVarint(fSpanKind, uint64(s.Kind)) +
		sizeFixed64(fSpanStart, uint64(s.Start)) + sizeFixed64(fSpanEnd, uint64(s.End)) +
		sizeAttrs(fSpanAttributes, s.Attrs) + sizeMsg(fSpanStatus, sizeStatus(s))
	if s.Flags != 0 {
		n += protowire.SizeTag(fSpanFlags) + protowire.SizeFixed32()
	}
	if s.ParentID != ([8]byte{}) {
		n += sizeBytes(fSpanParentID, len(s.ParentID))
	}
	return n
}

func appendSpan(b []byte, s *Span) []byte {
	b = appendBytes(b, fSpanTraceID, s.TraceID[:])
	b = appendBytes(b, fSpanSpanID, s.SpanID[:])
	b = appendString(b, fSpanTraceState, s.TraceState)
	if s.ParentID != ([8]byte{}) {
		b = appendBytes(b, fSpanParentID, s.ParentID[:])
	}
	b = appendString(b, fSpanName, s.Name)
	b = appendVarint(b, fSpanKind, uint64(s.Kind))
	b = appendFixed64(b, fSpanStart, uint64(s.Start))
	b = appendFixed64(b, fSpanEnd, uint64(s.End))
	b = appendAttrs(b, fSpanAttributes, s.Attrs)
	// The SDK always sent a status, an empty one for unset.
	b = appendMsgHead(b, fSpanStatus, sizeStatus(s))
	b = appendString(b, fStatusMessage, s.StatusMsg)
	b = appendVarint(b, fStatusCode, uint64(s.Status))
	if s.Flags == 0 {
		return b
	}
	b = protowire.AppendTag(b, fSpanFlags, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, s.Flags)
}

func sizeStatus(s *Span) int {
	return sizeString(fStatusMessage, s.StatusMsg) + sizeVarint(fStatusCode, uint64(s.Status))
}

func sizeAttrs(field protowire.Number, kvs []KeyValue) int {
	n := 0
	for i := range kvs {
		n += sizeMsg(field, sizeKeyValue(&kvs[i]))
	}
	return n
}

func appendAttrs(b []byte, field protowire.Number, kvs []KeyValue) []byte {
	for i := range kvs {
		kv := &kvs[i]
		b = appendMsgHead(b, field, sizeKeyValue(kv))
		b = appendString(b, fKeyValueKey, kv.Key)
		b = appendMsgHead(b, fKeyValueValue, sizeAny(kv))
		// A oneof member is written even when it holds its zero value: that
		// is what tells an integer 0 from an absent value.
		switch kv.kind {
		case 's':
			b = protowire.AppendTag(b, fAnyString, protowire.BytesType)
			b = protowire.AppendString(b, kv.s)
		case 'i':
			b = protowire.AppendTag(b, fAnyInt, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(kv.n))
		case 'f':
			b = protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type)
			b = protowire.AppendFixed64(b, math.Float64bits(kv.f))
		}
	}
	return b
}

func sizeKeyValue(kv *KeyValue) int {
	return sizeString(fKeyValueKey, kv.Key) + sizeMsg(fKeyValueValue, sizeAny(kv))
}

func sizeAny(kv *KeyValue) int {
	switch kv.kind {
	case 's':
		return protowire.SizeTag(fAnyString) + protowire.SizeBytes(len(kv.s))
	case 'i':
		return protowire.SizeTag(fAnyInt) + protowire.SizeVarint(uint64(kv.n))
	case 'f':
		return protowire.SizeTag(fAnyDouble) + protowire.SizeFixed64()
	}
	return 0
}

// The helpers below leave out a scalar field holding its zero value, as
// proto3 does; messages are always written.

func sizeMsg(field protowire.Number, n int) int {
	return protowire.SizeTag(field) + protowire.SizeBytes(n)
}

func appendMsgHead(b []byte, field protowire.Number, n int) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(n))
}

func sizeString(field protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(field) + protowire.SizeBytes(len(s))
}

func appendString(b []byte, field protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func sizeBytes(field protowire.Number, n int) int {
	return protowire.SizeTag(field) + protowire.SizeBytes(n)
}

func appendBytes(b []byte, field protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func sizeVarint(field protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(field) + protowire.SizeVarint(v)
}

func appendVarint(b []byte, field protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func sizeFixed64(field protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(field) + protowire.SizeFixed64()
}

func appendFixed64(b []byte, field protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}
