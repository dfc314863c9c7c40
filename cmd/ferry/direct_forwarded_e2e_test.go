package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// In direct mode a worker reads trusted_proxies' headers itself (ext/ferry's
// ferry_forwarded.c), and PHP must get from it exactly what the Go front gives.
// Every case goes through both: a request to the real front, whose app echoes
// remote, host and scheme, and Ferry\Ext\forwarded_client() with the same
// trusted list, the same peer (the test's own end of the connection) and the
// same header fields.

// fwdConfigs are the trusted_proxies lists the cases run under; the test
// client is always 127.0.0.1.
var fwdConfigs = [][]string{
	// The unit tests' trusted10, the client being the trusted peer.
	{"127.0.0.1", "10.0.0.0/8"},
	// proxies_e2e_test.go's.
	{"127.0.0.1/32"},
	// The peer is not trusted: nothing counts.
	{"10.0.0.0/8"},
	// The generator's: both families, a masked CIDR, netip's family rules
	// (::/0 holds no IPv4 address, a prefix inside ::ffff:0:0/96 holds
	// nothing), a zoned address (the zone is dropped).
	{"127.0.0.0/8", "10.1.0.0/16", "192.0.2.137/25", "2001:db8:1::/48", "::ffff:203.0.113.0/120", "fe80::1%eth0", "0:0:0:0:0:0:0:2"},
	{"127.0.0.1", "::/0"},
	// None: the front does not even look.
	{},
}

type fwdCase struct {
	name   string
	config int // index in fwdConfigs
	fields [][2]string
}

type fwdAnswer struct{ Remote, Host, Scheme string }

func TestDirectForwardedMatchesTheFront(t *testing.T) {
	so := extensionSO(t)
	cases := append(append(fwdFixedCases(), fwdRandomCases(20261128, 400)...), fwdAddressCases(34, 400)...)
	byConfig := map[int][]fwdCase{}
	for _, c := range cases {
		byConfig[c.config] = append(byConfig[c.config], c)
	}
	var inputs []fwdInput
	var fronts []fwdAnswer
	var kept []fwdCase
	refused := 0
	for cfg := range fwdConfigs {
		if len(byConfig[cfg]) == 0 {
			continue
		}
		list, _ := json.Marshal(fwdConfigs[cfg])
		s := startFerry(t, strings.Replace(appConfig(""), "max_body_size: 1MiB",
			"max_body_size: 1MiB\n  trusted_proxies: "+string(list), 1))
		for _, c := range byConfig[cfg] {
			peer, got, status := fwdThroughFront(t, s, c.fields)
			if status != http.StatusOK {
				// The front refused the head itself (a byte its grammar does not allow):
				// such a request never reaches trusted_proxies in either mode.
				refused++
				continue
			}
			kept = append(kept, c)
			fronts = append(fronts, got)
			inputs = append(inputs, fwdInputOf(fwdConfigs[cfg], peer, c.fields))
		}
	}
	if refused > len(cases)/10 {
		t.Errorf("the front refused %d of %d cases: the generator is off", refused, len(cases))
	}
	direct := fwdThroughExtension(t, so, inputs)
	changed := 0
	for i, c := range kept {
		if fronts[i] != direct[i] {
			t.Errorf("%s (trusted %v):\n  fields %q\n  front  %+v\n  direct %+v", c.name, fwdConfigs[c.config], c.fields, fronts[i], direct[i])
		}
		if fronts[i].Remote != inputs[i].Peer || fronts[i].Host != fwdHost || fronts[i].Scheme != "http" {
			changed++
		}
	}
	// A differential that never leaves the defaults proves little.
	if changed < len(kept)/3 {
		t.Errorf("only %d of %d cases changed remote, host or scheme", changed, len(kept))
	}
	t.Logf("%d cases compared (%d changed the client), %d refused by the front's parser", len(kept), changed, refused)
}

const fwdHost = "h.example"

// fwdThroughFront sends one request by hand, so that field lines go as
// written, repeated and in order, and the peer address PHP sees is known.
func fwdThroughFront(t *testing.T, s *server, fields [][2]string) (peer string, got fwdAnswer, status int) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var b strings.Builder
	b.WriteString("GET /echo HTTP/1.1\r\nHost: " + fwdHost + "\r\n")
	for _, f := range fields {
		b.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("fields %q: %v", fields, err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		return "", fwdAnswer{}, resp.StatusCode
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("fields %q: %v: %s", fields, err, body)
	}
	return conn.LocalAddr().String(), got, resp.StatusCode
}

// fwdInput is one call of forwarded_client(); bytes go in base64, since JSON
// strings would turn a byte that is not UTF-8 into U+FFFD.
type fwdInput struct {
	Trusted []string    `json:"trusted"`
	Peer    string      `json:"peer"`
	Fields  [][2]string `json:"fields"`
	Host    string      `json:"host"`
}

func fwdInputOf(trusted []string, peer string, fields [][2]string) fwdInput {
	in := fwdInput{Trusted: trusted, Peer: peer, Host: base64.StdEncoding.EncodeToString([]byte(fwdHost))}
	if in.Trusted == nil {
		in.Trusted = []string{}
	}
	for _, f := range fields {
		in.Fields = append(in.Fields, [2]string{base64.StdEncoding.EncodeToString([]byte(f[0])), base64.StdEncoding.EncodeToString([]byte(f[1]))})
	}
	return in
}

const fwdScript = `
$in = json_decode(file_get_contents($argv[1]), true, 512, JSON_THROW_ON_ERROR);
$out = [];
foreach ($in as $c) {
    $fields = array_map(fn($f) => [base64_decode($f[0]), base64_decode($f[1])], $c['fields'] ?? []);
    try {
        $r = Ferry\Ext\forwarded_client($c['trusted'], $c['peer'], $fields, base64_decode($c['host']));
    } catch (ValueError $e) {
        $out[] = ['Remote' => base64_encode('refused ' . implode(' ', $c['trusted'])), 'Host' => '', 'Scheme' => ''];
        continue;
    }
    $out[] = ['Remote' => base64_encode($r['remote']), 'Host' => base64_encode($r['host']), 'Scheme' => $r['https'] ? 'https' : 'http'];
}
echo json_encode($out, JSON_THROW_ON_ERROR);
`

// fwdThroughExtension runs every case in one php process.
func fwdThroughExtension(t *testing.T, so string, inputs []fwdInput) []fwdAnswer {
	t.Helper()
	file := filepath.Join(t.TempDir(), "cases.json")
	data, _ := json.Marshal(inputs)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("php", "-n", "-d", "extension="+so, "-d", "display_errors=stderr", "-r", fwdScript, file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v: %s%s", err, out, stderr.String())
	}
	var got []fwdAnswer
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("php printed %q: %v", out, err)
	}
	if len(got) != len(inputs) {
		t.Fatalf("php answered %d cases of %d", len(got), len(inputs))
	}
	for i := range got {
		for _, s := range []*string{&got[i].Remote, &got[i].Host} {
			b, err := base64.StdEncoding.DecodeString(*s)
			if err != nil {
				t.Fatal(err)
			}
			*s = string(b)
		}
	}
	return got
}

// fwdFixedCases are internal/gateway/forwarded_test.go's and the proxies e2e
// tests' cases, each under the trusted lists it was written for and under one
// that does not trust the peer.
func fwdFixedCases() []fwdCase {
	var out []fwdCase
	add := func(name string, fields ...[2]string) {
		for _, cfg := range []int{0, 2} {
			out = append(out, fwdCase{name: fmt.Sprintf("%s (config %d)", name, cfg), config: cfg, fields: fields})
		}
	}
	fwd := func(v string) [2]string { return [2]string{"Forwarded", v} }
	xff := func(v string) [2]string { return [2]string{"X-Forwarded-For", v} }
	for _, v := range []string{
		`for=192.0.2.60;proto=https;host=example.com`,
		`for="[2001:db8:cafe::17]:4711";proto=https`,
		`For=192.0.2.60 ; PROTO=https`,
		`for=6.6.6.6;host=evil, for=192.0.2.60;proto=https;host=shop.example, for=10.1.1.1;proto=http`,
		`for=unknown;proto=https`,
		`for=_hidden, for=10.1.1.1`,
		`for=192.0.2.60;proto`,
		`for="192.0.2.60`,
		`for=192.0.2.60;host="a/b"`,
		`for=2001:db8::1`,
		`, for=192.0.2.60;;proto=https;, ,for=10.1.1.1,`,
		`for=6.6.6.6, f"or=192.0.2.60`,
		`for=192.0.2.60 proto=https`,
		`for="192.0.2.60"x`,
	} {
		add("rfc7239 "+v, fwd(v))
	}
	add("xff: the client's own line", xff("6.6.6.6"), xff("192.0.2.1"))
	add("xff: the client's own list", xff("6.6.6.6, 7.7.7.7"), xff("192.0.2.1"))
	add("xff: trusted hops span lines", xff("6.6.6.6, 192.0.2.1"), xff("10.1.1.1"), xff("10.2.2.2, 10.3.3.3"))
	add("xff: an empty line ends the walk", xff("6.6.6.6"), xff(""))
	add("xff: an empty entry ends the walk", xff("6.6.6.6"), xff(", 10.1.1.1"))
	add("xfp: the last line's", [2]string{"X-Forwarded-Proto", "https"}, [2]string{"X-Forwarded-Proto", "http"})
	add("xfp: https in the last line", [2]string{"X-Forwarded-Proto", "http"}, [2]string{"X-Forwarded-Proto", "https"})
	add("xfh: the last line's", [2]string{"X-Forwarded-Host", "evil"}, [2]string{"X-Forwarded-Host", "shop.example"})
	add("xfh: not a uri-host[:port]", [2]string{"X-Forwarded-Host", "a:x"})
	add("forwarded host: not a uri-host[:port]", fwd(`for=192.0.2.60;host="[zz]"`))
	add("forwarded: the client's own line", fwd("for=6.6.6.6;proto=https;host=evil"), fwd("for=192.0.2.60"))
	add("forwarded: proto and host of the client's hop", fwd("for=6.6.6.6;proto=https;host=evil"), fwd("for=192.0.2.60;proto=http;host=shop.example"))
	add("forwarded: trusted hops span lines", fwd("for=6.6.6.6;host=evil, for=192.0.2.60;proto=https"), fwd("for=10.1.1.1;proto=http"))
	add("forwarded: a malformed client line", fwd(`for="6.6.6.6`), fwd("for=192.0.2.60;proto=https"))
	add("forwarded: a malformed last line", fwd("for=192.0.2.60"), fwd("for="))
	add("forwarded: an empty last line", fwd("for=6.6.6.6"), fwd(" , "), fwd("for=192.0.2.60"))
	add("forwarded and xff naming other clients", xff("6.6.6.6"), fwd("for=192.0.2.60"), xff("7.7.7.7"))
	add("a client's forwarded behind an xff proxy", fwd("for=6.6.6.6;proto=https;host=evil"), xff("192.0.2.1"))
	add("forwarded and xff agreeing", xff("192.0.2.60, 10.1.1.1"), fwd("for=192.0.2.60;proto=https;host=shop.example, for=10.1.1.1"))
	add("x_forwarded_for is not x-forwarded-for", xff("192.0.2.1"), [2]string{"X_Forwarded_For", "6.6.6.6"},
		[2]string{"X_Forwarded_Proto", "https"}, [2]string{"Forwarded_", "for=6.6.6.6"})
	// A host resolved from \-escapes outlives the next element's escaped values.
	add("an escaped host, then an escaped node", fwd(`for="192\.0\.2\.60";host="b\ad/host", for=10.1.1.1;host="g\ood.example"`))
	add("escaped proto and node", fwd(`for="[2001:db8\:cafe::17]:4711";proto="h\ttp\s"`))
	add("every for= unknown", fwd("for=unknown, for=_a"), xff("192.0.2.1"))
	add("nothing but malformed lines", fwd(`for="`), fwd("x"), xff("192.0.2.1, 10.1.1.1"))
	client := strings.Repeat("for=6.6.6.6;host=evil, ", 2000)
	hops := strings.Repeat(", for=10.1.1.1", 16)
	add("a long client list", fwd(client+"for=192.0.2.60"))
	add("a long client line before the proxy's", fwd(client+"for=7.7.7.7"), fwd("for=192.0.2.60, for=10.1.1.1"))
	add("more trusted hops than are kept", fwd("for=192.0.2.60"+hops))
	add("as many trusted hops as are kept", fwd("for=192.0.2.60"+hops[len(", for=10.1.1.1"):]))
	// cmd/ferry/proxies_e2e_test.go, trusting the client and trusting nobody.
	for _, cfg := range []int{1, 5} {
		for i, fields := range [][][2]string{
			{xff("203.0.113.9, 127.0.0.1"), {"X-Forwarded-Proto", "https"}},
			{fwd(`for=198.51.100.7;proto=https;host=shop.example, for=127.0.0.1`), xff("198.51.100.7")},
			{fwd(`for=198.51.100.7;proto=https;host=shop.example`), xff("203.0.113.9")},
		} {
			out = append(out, fwdCase{name: fmt.Sprintf("proxies e2e %d (config %d)", i, cfg), config: cfg, fields: fields})
		}
	}
	return out
}
