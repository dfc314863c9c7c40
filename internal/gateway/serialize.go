package gateway

import "strconv"

// phpArray writes PHP's serialize() format, which PHP turns back into arrays
// with one C call (unserialize with allowed_classes=false): cheaper for the
// worker than any decoder written in PHP. Only strings, ints and arrays (a
// constant bool goes in with key).
type phpArray []byte

func (b phpArray) open(n int) phpArray {
	b = append(b, "a:"...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ":{"...)
}

func (b phpArray) close() phpArray { return append(b, '}') }

func (b phpArray) str(s string) phpArray {
	b = append(b, "s:"...)
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ":\""...)
	b = append(b, s...)
	return append(b, "\";"...)
}

func (b phpArray) int(i int64) phpArray {
	b = append(b, "i:"...)
	b = strconv.AppendInt(b, i, 10)
	return append(b, ';')
}

// key appends pre-serialized bytes: the constant keys are written out in the
// source, which spares formatting their lengths on every request.
func (b phpArray) key(serialized string) phpArray { return append(b, serialized...) }

func (b phpArray) bytes(s []byte) phpArray {
	b = append(b, "s:"...)
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ":\""...)
	b = append(b, s...)
	return append(b, "\";"...)
}
