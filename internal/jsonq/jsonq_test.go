package jsonq

import (
	"encoding/json"
	"testing"
)

// Whatever the bytes, the literal parses, and to what encoding/json's own
// literal for them parses to.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" and \\", "ctl \x00\x1f\x7f", "é ☃ 𝄞", "bad \xff\xfe", "cut \xe2\x98"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		std, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		for _, out := range [][]byte{Append(nil, s), Append(nil, []byte(s))} {
			var got string
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%q gave %q: %v", s, out, err)
			}
			if got != want {
				t.Fatalf("%q decoded to %q, encoding/json's to %q", s, got, want)
			}
		}
	})
}
