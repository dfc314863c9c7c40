package otlp

import (
	"bytes"
	"math"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func sampleSpans() []*Span {
	return []*Span{
		{
			TraceID: [16]byte{0x4b, 0xf9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, SpanID: [8]byte{1, 2, 3, 4, 5, 6, 7, 8},
			ParentID: [8]byte{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceState: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
			Flags: 0x01 | FlagHasIsRemote | FlagIsRemote, Name: "GET", Kind: KindServer,
			Start: 1_700_000_000_123_456_789, End: 1_700_000_000_223_456_789,
			Attrs: []KeyValue{String("url.path", "/echo"), String("empty", ""), Int("http.response.status_code", 200),
				Int("zero", 0), Int("negative", -3), Float("ferry.php_seconds", 0.000125), Float("zero.float", 0),
				Float("nan", math.Inf(1))},
		},
		{
			TraceID: [16]byte{15: 1}, SpanID: [8]byte{7: 2}, Flags: FlagHasIsRemote, Name: "POST", Kind: KindServer,
			Start: 5, End: 6, Status: StatusError, StatusMsg: "Internal Server Error",
			Attrs: []KeyValue{String("client.address", "10.0.0.1")},
		},
	}
}

// official builds what the OpenTelemetry SDK's exporter built for the same
// spans, with the official generated types.
func official(resource []KeyValue, scope string, spans []*Span) *tracepb.TracesData {
	kvs := func(in []KeyValue) []*commonpb.KeyValue {
		var out []*commonpb.KeyValue
		for _, kv := range in {
			v := &commonpb.AnyValue{}
			switch kv.kind {
			case 's':
				v.Value = &commonpb.AnyValue_StringValue{StringValue: kv.s}
			case 'i':
				v.Value = &commonpb.AnyValue_IntValue{IntValue: kv.n}
			case 'f':
				v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: kv.f}
			}
			out = append(out, &commonpb.KeyValue{Key: kv.Key, Value: v})
		}
		return out
	}
	ss := &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: scope}}
	for _, s := range spans {
		p := &tracepb.Span{TraceId: s.TraceID[:], SpanId: s.SpanID[:], TraceState: s.TraceState, Flags: s.Flags,
			Name: s.Name, Kind: tracepb.Span_SpanKind(s.Kind), StartTimeUnixNano: uint64(s.Start), EndTimeUnixNano: uint64(s.End),
			Attributes: kvs(s.Attrs), Status: &tracepb.Status{Code: tracepb.Status_StatusCode(s.Status), Message: s.StatusMsg}}
		if s.ParentID != ([8]byte{}) {
			p.ParentSpanId = s.ParentID[:]
		}
		ss.Spans = append(ss.Spans, p)
	}
	return &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: kvs(resource)}, ScopeSpans: []*tracepb.ScopeSpans{ss}}}}
}

// The hand-written encoding is what the generated types decode to the same
// message, and byte for byte what they write: field order, zero values left
// out, oneof zeros kept, the empty status present.
func TestRequestMatchesTheOfficialTypes(t *testing.T) {
	res := []KeyValue{String("host.name", "web-1"), String("service.name", "ferry")}
	spans := sampleSpans()
	got := AppendRequest(nil, res, "ferry", spans)
	want := official(res, "ferry", spans)

	var dec tracepb.TracesData
	if err := proto.Unmarshal(got, &dec); err != nil {
		t.Fatalf("the official types cannot decode the request: %v", err)
	}
	if !proto.Equal(&dec, want) {
		t.Fatalf("decoded:\n%v\nwant:\n%v", &dec, want)
	}
	wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wire) {
		t.Errorf("bytes differ from the generated encoder's:\n got %x\nwant %x", got, wire)
	}
	// Appending leaves what was in the buffer alone.
	if again := AppendRequest([]byte("x"), res, "ferry", spans); string(again[1:]) != string(got) || again[0] != 'x' {
		t.Error("AppendRequest does not append")
	}
}

func TestEmptyBatchStillDecodes(t *testing.T) {
	var dec tracepb.TracesData
	if err := proto.Unmarshal(AppendRequest(nil, nil, "ferry", nil), &dec); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&dec, official(nil, "ferry", nil)) {
		t.Errorf("decoded %v", &dec)
	}
}

func FuzzAppendRequest(f *testing.F) {
	f.Add("GET", "/x", "k", int64(-1), 0.5, uint32(0x301), "state=1", []byte{1, 2})
	f.Add("", "", "", int64(0), 0.0, uint32(0), "", []byte{})
	f.Fuzz(func(t *testing.T, name, path, key string, n int64, x float64, flags uint32, state string, id []byte) {
		s := &Span{Name: name, TraceState: state, Flags: flags, Start: n, End: n + 1, Kind: KindServer,
			Attrs: []KeyValue{String(key, path), {Key: key, kind: 'i', n: n}, Float(path, x)}}
		copy(s.TraceID[:], id)
		copy(s.ParentID[:], id)
		got := AppendRequest(nil, []KeyValue{String(key, name)}, path, []*Span{s, s})
		want := official([]KeyValue{String(key, name)}, path, []*Span{s, s})
		wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
		if err != nil {
			t.Skip() // invalid UTF-8 in a string: the generated encoder refuses it
		}
		if !bytes.Equal(got, wire) {
			t.Fatalf("bytes differ:\n got %x\nwant %x", got, wire)
		}
	})
}
