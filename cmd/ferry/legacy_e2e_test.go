package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The legacy app of examples/legacy, a front controller written for FPM, served
// by nginx + php-fpm (Debian's nginx-light and php8.2-fpm, started here on free
// ports) and by Ferry with ext/ferry: every answer must be the same status
// line, headers and body. docs/legacy.md lists what is left out of the
// comparison: the headers each server adds on its own (Date, Server,
// X-Request-Id) and the framing (Content-Length or chunked, Connection), and
// the session id, random
// by nature, and nginx's missing reason phrase for codes it has none for.
func TestLegacyAppMatchesNginxFPM(t *testing.T) {
	so := extensionSO(t)
	nginx, err1 := exec.LookPath("nginx")
	fpm, err2 := exec.LookPath("php-fpm8.2")
	if err1 != nil || err2 != nil {
		t.Skip("nginx or php-fpm8.2 not installed (Debian: nginx-light php8.2-fpm)")
	}
	app, err := filepath.Abs("../../examples/legacy")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fpmURL := startNginxFPM(t, nginx, fpm, app, dir)

	ferrySessions := filepath.Join(dir, "ferry-sessions")
	if err := os.Mkdir(ferrySessions, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile(filepath.Join(app, "ferry.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEGACY_ADDRESS", "%ADDR%")
	t.Setenv("LEGACY_SESSIONS", ferrySessions)
	t.Setenv("FERRY_PHP_EXTENSION", so)
	cfg := strings.Replace(string(yaml), "[php, worker.php]", "[php, "+filepath.Join(app, "worker.php")+"]", 1) +
		"admin:\n  socket: \"%ADMIN%\"\n"
	s := startFerry(t, strings.ReplaceAll(cfg, "${LEGACY_ADDRESS:-127.0.0.1:8080}", "%ADDR%"))

	upload := func() (string, []byte) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		w.SetBoundary("legacy-boundary-0123456789")
		w.WriteField("caption", "a cat")
		f, _ := w.CreateFormFile("file", "cat.txt")
		f.Write(bytes.Repeat([]byte("meow\n"), 1000))
		w.Close()
		return w.FormDataContentType(), b.Bytes()
	}
	ctype, body := upload()
	steps := []struct {
		name, method, path, ctype string
		body                      []byte
	}{
		{"first visit", "GET", "/?name=Ada&theme=dark", "", nil},
		{"second visit, session counter", "GET", "/?name=Ada", "", nil},
		{"form page", "GET", "/form", "", nil},
		{"form post", "POST", "/form?from=query", "application/x-www-form-urlencoded", []byte("message=hello+%3Cworld%3E&tags[]=a&tags[]=b")},
		{"empty form post, exit after the page", "POST", "/form", "application/x-www-form-urlencoded", []byte("message=")},
		{"multipart upload, move_uploaded_file", "POST", "/upload", ctype, body},
		{"upload without a file", "POST", "/upload", "application/x-www-form-urlencoded", []byte("caption=x")},
		{"redirect then exit", "GET", "/redirect", "", nil},
		{"status line, header list, raw cookies", "GET", "/headers", "", nil},
		{"not found", "GET", "/nowhere?x=1", "", nil},
		{"third visit", "GET", "/", "", nil},
	}
	fpmClient, ferryClient := legacyClient(t), legacyClient(t)
	for _, st := range steps {
		want := legacyDo(t, fpmClient, fpmURL, st.method, st.path, st.ctype, st.body)
		got := legacyDo(t, ferryClient, s.url, st.method, st.path, st.ctype, st.body)
		if want != got {
			t.Errorf("%s: %s %s differs\n--- nginx + php-fpm\n%s\n--- ferry + ext/ferry\n%s", st.name, st.method, st.path, want, got)
		}
	}
	if t.Failed() {
		t.Logf("ferry log:\n%s", s.logText())
	}
}

// legacyClient keeps cookies as a browser would and does not follow redirects.
func legacyClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{
		Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// The fields each server sets on its own, and the framing, which differs by
// design (nginx chunks FastCGI answers, Ferry sends Content-Length).
var legacySkipped = []string{"Date", "Server", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "X-Request-Id"}

var sessionID = regexp.MustCompile(`PHPSESSID=[a-z0-9,-]+`)

// legacyDo returns one exchange as text: the status line, the headers sorted
// by name (values in order), and the body.
func legacyDo(t *testing.T, c *http.Client, base, method, path, ctype string, body []byte) string {
	t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	// nginx 1.22 sends no phrase for codes it has none for (422): a missing phrase
	// and the standard one count as the same; any other phrase must match.
	phrase := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	if phrase == "" || phrase == http.StatusText(resp.StatusCode) {
		phrase = "(standard phrase)"
	}
	fmt.Fprintf(&out, "%s %d %s\n", resp.Proto, resp.StatusCode, phrase)
	names := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		if !slices.Contains(legacySkipped, k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range resp.Header[k] {
			fmt.Fprintf(&out, "%s: %s\n", k, sessionID.ReplaceAllString(v, "PHPSESSID=<id>"))
		}
	}
	out.WriteString("\n")
	out.Write(b)
	return out.String()
}

// startNginxFPM starts php-fpm (a static pool of 2 on a unix socket, Debian's
// fpm php.ini) and nginx in front of it, every request going to the app's
// index.php as with `try_files $uri /index.php?$query_string`; both are
// stopped by pid when the test ends. It returns nginx's URL.
func startNginxFPM(t *testing.T, nginx, fpm, app, dir string) string {
	t.Helper()
	sock := filepath.Join(dir, "fpm.sock")
	sessions := filepath.Join(dir, "fpm-sessions")
	for _, d := range []string{sessions, filepath.Join(dir, "nginx-temp")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	root := os.Geteuid() == 0
	user := ""
	if root {
		user = "user = root\ngroup = root\n"
	}
	fpmConf := writeFile(t, dir, "php-fpm.conf", fmt.Sprintf(`[global]
pid = %[1]s/php-fpm.pid
error_log = %[1]s/php-fpm.log
daemonize = no

[legacy]
%[2]slisten = %[3]s
pm = static
pm.max_children = 2
php_admin_value[session.save_path] = %[4]s
`, dir, user, sock, sessions))
	args := []string{"-F", "-y", fpmConf}
	if root {
		args = append(args, "-R")
	}
	startDaemon(t, "php-fpm", exec.Command(fpm, args...), syscall.SIGQUIT, func() bool {
		_, err := os.Stat(sock)
		return err == nil
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	tmp := filepath.Join(dir, "nginx-temp")
	userLine := ""
	if root {
		userLine = "user root root;"
	}
	nginxConf := writeFile(t, dir, "nginx.conf", fmt.Sprintf(`%[1]s
daemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/nginx-error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[3]s/body;
  proxy_temp_path %[3]s/proxy;
  fastcgi_temp_path %[3]s/fastcgi;
  uwsgi_temp_path %[3]s/uwsgi;
  scgi_temp_path %[3]s/scgi;
  client_max_body_size 8m;
  server {
    listen 127.0.0.1:%[4]d;
    root %[5]s;
    location / {
      fastcgi_pass unix:%[6]s;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME %[5]s/index.php;
      fastcgi_param SCRIPT_NAME /index.php;
      fastcgi_param DOCUMENT_URI /index.php;
    }
  }
}
`, userLine, dir, tmp, port, app, sock))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	startDaemon(t, "nginx", exec.Command(nginx, "-p", dir, "-c", nginxConf, "-e", filepath.Join(dir, "nginx-error.log")), syscall.SIGQUIT, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr
}

// startDaemon starts cmd in its own process group, polls ready until it holds
// (20 s at most), and stops the group with sig at cleanup, then SIGKILL.
func startDaemon(t *testing.T, name string, cmd *exec.Cmd, sig syscall.Signal, ready func() bool) {
	t.Helper()
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, sig)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for !ready() {
		select {
		case <-exited:
			t.Fatalf("%s exited at start:\n%s", name, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 20s:\n%s", name, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
