package rrproto

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/valyala/fasthttp"
)

func TestFormTreeShapesNamesAsPHP(t *testing.T) {
	tr := &formTree{}
	parseForm(tr, []byte("a=1&a=2&l[]=x&l[]=y&m[k][]=1&m[k][]=2&m[j]=z&sp ace=s&bad=%zz&u=%E2%82%AC+%FF&idx[5]=five&idx[]=six&&=nokey&open[x=1"))
	got := string(tr.appendJSON(nil))
	want := `{"a":"2","l":{"0":"x","1":"y"},"m":{"k":{"0":"1","1":"2"},"j":"z"},"space":"s","u":"€ \ufffd","idx":{"5":"five","6":"six"},"open":"1"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Fatal("not JSON")
	}
	deep := &formTree{}
	deep.mount("d"+strings.Repeat("[x]", maxTreeDepth), "v")
	if !deep.empty() {
		t.Fatal("a name nested deeper than PHP allows must be dropped")
	}
}

func TestUploadTree(t *testing.T) {
	tr := uploadTree([]multipart.Upload{
		{Field: "photo", Name: `C:\dir\a.png`, Type: "image/png", Path: "/tmp/x", Size: 3},
		{Field: "docs[]", Name: "d/b.txt", Path: "/tmp/y", Size: 1},
		{Field: "none", ErrCode: 4},
	})
	got := string(tr.appendJSON(nil))
	want := `{"photo":{"name":"a.png","mime":"image/png","size":3,"error":0,"tmpName":"/tmp/x"},` +
		`"docs":{"0":{"name":"b.txt","mime":"","size":1,"error":0,"tmpName":"/tmp/y"}},` +
		`"none":{"name":"","mime":"","size":0,"error":4,"tmpName":""}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestRRAnswer(t *testing.T) {
	proto := AppendResponse(nil, 201, map[string][]string{"X-A": {"1", "2"}})
	cases := []struct {
		name       string
		ctx, body  string
		status     int
		ctype, out string
		bad        bool
	}{
		{name: "proto", ctx: string(proto), body: "hi", status: 201, ctype: "text/plain; charset=utf-8", out: "hi"},
		{name: "json", ctx: `{"status":202,"headers":{"Content-Type":["text/csv"]}}`, body: "a,b", status: 202, ctype: "text/csv", out: "a,b"},
		{name: "json empty headers", ctx: `{"status":200,"headers":[]}`, body: "", status: 200},
		{name: "informational final", ctx: `{"status":103}`, bad: true},
		{name: "header injection", ctx: `{"status":200,"headers":{"X":["a\r\nb"]}}`, bad: true},
		{name: "garbage", ctx: "\xff\xff", bad: true},
	}
	for _, c := range cases {
		var resp fasthttp.Response
		_, err := New(Proto).WriteAnswer(&resp, []byte(c.ctx), []byte(c.body))
		if c.bad {
			if err == nil {
				t.Errorf("%s: accepted", c.name)
			}
			continue
		}
		if err != nil || resp.StatusCode() != c.status || string(resp.Body()) != c.out || string(resp.Header.ContentType()) != c.ctype {
			t.Errorf("%s: %v %d %q %q", c.name, err, resp.StatusCode(), resp.Body(), resp.Header.ContentType())
		}
		if c.name == "proto" && strings.Join(headerValues(&resp, "X-A"), ",") != "1,2" {
			t.Errorf("proto headers: %s", resp.Header.String())
		}
	}
}

func headerValues(r *fasthttp.Response, k string) []string {
	var out []string
	for _, v := range r.Header.PeekAll(k) {
		out = append(out, string(v))
	}
	return out
}
