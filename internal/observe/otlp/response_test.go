package otlp

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// reference builds ExportTraceServiceResponse and google.rpc.Status from
// their .proto definitions with the protobuf runtime, so that the generated
// decoder judges the hand-written one without the collector package (whose
// grpc stubs would come with it).
func reference(t testing.TB) (response, status protoreflect.MessageDescriptor) {
	t.Helper()
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, msg string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: typ.Enum(), JsonName: proto.String(name)}
		if msg != "" {
			f.TypeName = proto.String(msg)
		}
		return f
	}
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("ref.proto"), Package: proto.String("ref"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Partial"), Field: []*descriptorpb.FieldDescriptorProto{
				field("rejected_spans", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""),
				field("error_message", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, "")}},
			{Name: proto.String("Response"), Field: []*descriptorpb.FieldDescriptorProto{
				field("partial_success", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".ref.Partial")}},
			{Name: proto.String("Status"), Field: []*descriptorpb.FieldDescriptorProto{
				field("code", 1, descriptorpb.FieldDescriptorProto_TYPE_INT32, ""),
				field("message", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
				field("details", 3, descriptorpb.FieldDescriptorProto_TYPE_BYTES, "")}},
		},
	}
	fd.MessageType[2].Field[2].Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	file, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return file.Messages().ByName("Response"), file.Messages().ByName("Status")
}

func partialBody(rejected int64, msg string) []byte {
	var p []byte
	p = protowire.AppendTag(p, 1, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(rejected))
	p = protowire.AppendTag(p, 2, protowire.BytesType)
	p = protowire.AppendString(p, msg)
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

func TestPartialSuccess(t *testing.T) {
	for _, c := range []struct {
		body []byte
		n    int64
		msg  string
	}{
		{nil, 0, ""},
		{partialBody(3, "too old"), 3, "too old"},
		{append(partialBody(3, "a"), partialBody(0, "b")...), 0, "b"}, // the last one wins
		// An unknown fixed64 field before it is skipped.
		{append(protowire.AppendFixed64(protowire.AppendTag(nil, 9, protowire.Fixed64Type), 1), partialBody(1, "x")...), 1, "x"},
	} {
		n, msg, err := PartialSuccess(c.body)
		if err != nil || n != c.n || msg != c.msg {
			t.Errorf("%x: %d %q %v, want %d %q", c.body, n, msg, err, c.n, c.msg)
		}
	}
	if _, _, err := PartialSuccess([]byte{0x0a, 0x05, 1}); err == nil {
		t.Error("a truncated message decoded")
	}
}

// FuzzDecodeResponse compares the collector-answer decoders with the
// protobuf runtime's: whatever the runtime accepts must give the same
// values, and nothing may panic.
func FuzzDecodeResponse(f *testing.F) {
	resp, status := reference(f)
	f.Add(partialBody(7, "dropped"))
	f.Add([]byte{0x08, 0x0e, 0x12, 0x03, 'b', 'a', 'd'})
	f.Add([]byte{0x0a, 0x00})
	f.Add([]byte{0x0a, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, msg, err := PartialSuccess(b)
		m := dynamicpb.NewMessage(resp)
		if proto.Unmarshal(b, m) == nil {
			if err != nil {
				t.Fatalf("runtime decodes %x, PartialSuccess fails: %v", b, err)
			}
			ps := m.Get(resp.Fields().ByNumber(1)).Message()
			wantN := ps.Get(ps.Descriptor().Fields().ByNumber(1)).Int()
			wantMsg := ps.Get(ps.Descriptor().Fields().ByNumber(2)).String()
			if n != wantN || msg != wantMsg {
				t.Fatalf("%x: got %d %q, runtime %d %q", b, n, msg, wantN, wantMsg)
			}
		}
		smsg, serr := StatusMessage(b)
		s := dynamicpb.NewMessage(status)
		if proto.Unmarshal(b, s) == nil {
			if serr != nil {
				t.Fatalf("runtime decodes %x, StatusMessage fails: %v", b, serr)
			}
			if want := s.Get(status.Fields().ByNumber(2)).String(); smsg != want {
				t.Fatalf("%x: status message %q, runtime %q", b, smsg, want)
			}
		}
	})
}
