package frame

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/frames.json")

const vectorsPath = "../../testdata/frames.json"

type vector struct {
	Name        string   `json:"name"`
	Flags       *byte    `json:"flags,omitempty"`
	StreamFlags *byte    `json:"stream_flags,omitempty"`
	Options     []uint32 `json:"options,omitempty"`
	PayloadHex  *string  `json:"payload_hex,omitempty"`
	FrameHex    string   `json:"frame_hex"`
	Error       Kind     `json:"error,omitempty"`
}

func valid(name string, flags, stream byte, opts []uint32, payload []byte) vector {
	p := hex.EncodeToString(payload)
	return vector{Name: name, Flags: &flags, StreamFlags: &stream, Options: opts, PayloadHex: &p,
		FrameHex: hex.EncodeToString(Append(nil, flags, stream, opts, payload))}
}

func invalid(name string, raw []byte, k Kind) vector {
	return vector{Name: name, FrameHex: hex.EncodeToString(raw), Error: k}
}

// buildVectors is the single source of the shared vectors; the PHP codec checks
// the same file, so both sides agree byte for byte.
func buildVectors() []vector {
	ten := []uint32{0, 1, 2, 3, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff, 0xffffffff}
	big := bytes.Repeat([]byte("ferry"), 1000)
	vs := []vector{
		valid("empty", 0, 0, nil, nil),
		valid("handshake", Control|JSON, 0, nil, []byte(`{"pid":1234}`)),
		valid("stop", Control|JSON, 0, nil, []byte(`{"stop":true}`)),
		valid("job", CodecRaw, 0, []uint32{5, 7}, []byte("hello world")),
		valid("error", Error, 0, []uint32{0, 42}, []byte("boom")),
		valid("ten_options", CodecRaw|MsgPack, Stream|Stop, ten, []byte{0, 1, 2, 0xff}),
		valid("all_flags", 0xff, Stream|Stop|Ping|Pong, []uint32{1}, []byte{0xc1}),
		valid("binary_5000", Proto, Ping, []uint32{3}, big),
	}
	good := Append(nil, CodecRaw, 0, []uint32{1}, []byte("abc"))
	badVer := bytes.Clone(good)
	badVer[0] = 2<<4 | 4
	badCRC := bytes.Clone(good)
	badCRC[7] ^= 0x55
	badLen := bytes.Clone(good)
	badLen[2] = 'x' // length changed, CRC no longer matches
	tooMany := Append(nil, CodecRaw, 0, nil, nil)
	tooMany[0] = Version<<4 | 14
	fixCRC(tooMany)
	tooFew := Append(nil, CodecRaw, 0, nil, nil)
	tooFew[0] = Version<<4 | 2
	fixCRC(tooFew)
	huge := Append(nil, CodecRaw, 0, nil, nil)
	huge[2], huge[3], huge[4], huge[5] = 0xff, 0xff, 0xff, 0x7f
	fixCRC(huge)
	return append(vs,
		invalid("bad_version", badVer, ErrVersion),
		invalid("bad_crc", badCRC, ErrCRC),
		invalid("length_tampered", badLen, ErrCRC),
		invalid("eleven_options", tooMany, ErrOptions),
		invalid("header_too_short", tooFew, ErrOptions),
		invalid("payload_2GiB", huge, ErrTooLarge),
		invalid("truncated_payload", good[:len(good)-1], ErrTruncated),
		invalid("truncated_header", good[:7], ErrTruncated),
		invalid("text_instead_of_frame", []byte("Warning: include(app.php): Failed to open stream"), ErrVersion),
	)
}

func fixCRC(h []byte) {
	c := crc32.ChecksumIEEE(h[:6])
	h[6], h[7], h[8], h[9] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
}

// testMax is the payload limit the vectors assume (the PHP test uses the same).
const testMax = 16 << 20

func TestSharedVectors(t *testing.T) {
	want, err := json.MarshalIndent(buildVectors(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile(vectorsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/frame -run SharedVectors -update)", err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("%s is stale: run go test ./internal/frame -run SharedVectors -update", vectorsPath)
	}
	var vs []vector
	if err := json.Unmarshal(have, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		raw, _ := hex.DecodeString(v.FrameHex)
		f, n, err := Parse(raw, testMax)
		if v.Error != "" {
			var de *DecodeError
			if !errors.As(err, &de) || de.Kind != v.Error {
				t.Errorf("%s: got %v, want %s error", v.Name, err, v.Error)
			}
			continue
		}
		payload, _ := hex.DecodeString(*v.PayloadHex)
		if err != nil || n != len(raw) || f.Flags != *v.Flags || f.Stream != *v.StreamFlags ||
			!reflect.DeepEqual(f.Options, v.Options) || !bytes.Equal(f.Payload, payload) {
			t.Errorf("%s: decoded %+v n=%d err=%v", v.Name, f, n, err)
		}
		// The streaming reader must agree with Parse.
		rf, err := NewReader(bytes.NewReader(raw), testMax).Read()
		if err != nil || !bytes.Equal(rf.Payload, payload) || !reflect.DeepEqual(rf.Options, v.Options) {
			t.Errorf("%s: reader got %+v %v", v.Name, rf, err)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	for _, v := range buildVectors() {
		if v.Error == "" {
			continue
		}
		raw, _ := hex.DecodeString(v.FrameHex)
		_, err := NewReader(bytes.NewReader(raw), testMax).Read()
		var de *DecodeError
		switch {
		case v.Error == ErrTruncated && len(raw) >= HeaderSize:
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: %v, want unexpected EOF", v.Name, err)
			}
		case !errors.As(err, &de) || de.Kind != v.Error:
			t.Errorf("%s: %v, want %s", v.Name, err, v.Error)
		case len(de.Raw) == 0:
			t.Errorf("%s: error keeps no raw bytes to quote", v.Name)
		}
	}
}

func TestGarbageIsQuoted(t *testing.T) {
	_, err := NewReader(strings.NewReader("Parse error: syntax error, unexpected end of file"), testMax).Read()
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "Parse error") {
		t.Fatalf("want the text quoted, got %v", err)
	}
}

func TestForgedLengthAllocatesLittle(t *testing.T) {
	h := Append(nil, CodecRaw, 0, nil, nil)
	h[2], h[3], h[4], h[5] = 0, 0, 0, 0x10 // 256 MiB claimed, nothing sent
	fixCRC(h)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := NewReader(bytes.NewReader(h), 1<<30).Read()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("want unexpected EOF, got %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("a forged 256 MiB length allocated %d bytes", grew)
	}
}

func TestAppendMany(t *testing.T) {
	var buf []byte
	for i := 0; i < 100; i++ {
		buf = Append(buf, CodecRaw, 0, []uint32{uint32(i), uint32(i * 7)}, []byte("ctx"), bytes.Repeat([]byte{byte(i)}, i))
	}
	r := NewReader(bytes.NewReader(buf), testMax)
	for i := 0; i < 100; i++ {
		f, err := r.Read()
		if err != nil || f.Options[1] != uint32(i*7) || len(f.Payload) != 3+i {
			t.Fatalf("frame %d: %+v %v", i, f, err)
		}
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("want EOF after the last frame, got %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, v := range buildVectors() {
		raw, _ := hex.DecodeString(v.FrameHex)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, n, err := Parse(data, 1<<16)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if n > len(data) || len(fr.Payload) > 1<<16 {
			t.Fatalf("n=%d of %d", n, len(data))
		}
		again := Append(nil, fr.Flags, fr.Stream, fr.Options, fr.Payload)
		if !bytes.Equal(again[:6], data[:6]) || again[10] != data[10] || !bytes.Equal(again[12:n], data[12:n]) {
			t.Fatalf("re-encoding differs: % x vs % x", again[:n], data[:n])
		}
		rf, err := NewReader(bytes.NewReader(data), 1<<16).Read()
		if err != nil || !bytes.Equal(rf.Payload, fr.Payload) {
			t.Fatalf("reader disagrees: %v", err)
		}
	})
}

// Frames read one after another share blocks: each must stay intact whatever
// the caller does with the frames read before it.
func TestFramesSharingABlockStayApart(t *testing.T) {
	var buf []byte
	sizes := []int{0, 1, 100, smallFrame, smallFrame + 1, 3000, 7, blockSize}
	for i, n := range sizes {
		buf = Append(buf, CodecRaw, 0, []uint32{uint32(i), uint32(n)}, bytes.Repeat([]byte{byte('a' + i)}, n))
	}
	r := NewReader(bytes.NewReader(buf), testMax)
	var got []Frame
	for range sizes {
		f, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		// An append past a payload or an option list must not reach the next one.
		_ = append(f.Payload, 'X', 'X')
		_ = append(f.Options, 99)
		got = append(got, f)
	}
	for i, f := range got {
		n := sizes[i]
		if f.Options[0] != uint32(i) || f.Options[1] != uint32(n) || len(f.Options) != 2 {
			t.Fatalf("frame %d: options %v", i, f.Options)
		}
		if !bytes.Equal(f.Payload, bytes.Repeat([]byte{byte('a' + i)}, n)) {
			t.Fatalf("frame %d: payload of %d bytes changed", i, n)
		}
	}
}

func TestSmallFramesAllocateRarely(t *testing.T) {
	var buf []byte
	for range 1000 {
		buf = Append(buf, CodecRaw, 0, []uint32{60, 1}, make([]byte, 120))
	}
	src := bytes.NewReader(buf)
	r := NewReader(src, testMax)
	allocs := testing.AllocsPerRun(1, func() {
		src.Reset(buf)
		for range 1000 {
			if _, err := r.Read(); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs > 50 {
		t.Fatalf("%v allocations for 1000 answers of 120 bytes", allocs)
	}
}
