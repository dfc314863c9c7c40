package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mysqlPHP returns the php flags that give the workers pdo_mysql: none when php has it,
// else -d extension= for each of mysqlnd.so and pdo_mysql.so in FERRY_TEST_PHP_MYSQL_DIR
// (Debian's php8.2-mysql unpacked somewhere); the test is skipped without either.
func mysqlPHP(t *testing.T) []string {
	t.Helper()
	if out, err := exec.Command("php", "-m").Output(); err == nil && strings.Contains(string(out), "pdo_mysql") {
		return nil
	}
	dir := os.Getenv("FERRY_TEST_PHP_MYSQL_DIR")
	if dir == "" {
		t.Skip("php has no pdo_mysql (Debian: php8.2-mysql), and FERRY_TEST_PHP_MYSQL_DIR is not set")
	}
	return []string{"-d", "extension=" + filepath.Join(dir, "mysqlnd.so"), "-d", "extension=" + filepath.Join(dir, "pdo_mysql.so")}
}

// startMariaDB runs mariadbd (FERRY_TEST_MARIADBD, else mariadbd from PATH) on a fresh data
// directory, without grant tables (root, no password), and returns its TCP port once it
// says it is ready for connections. extra are more mariadbd options.
func startMariaDB(t *testing.T, extra ...string) int {
	t.Helper()
	bin := os.Getenv("FERRY_TEST_MARIADBD")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("mariadbd"); err != nil {
			t.Skip("mariadbd not found (Debian: mariadb-server), and FERRY_TEST_MARIADBD is not set")
		}
	}
	// A port picked by the kernel and handed over: mariadbd cannot report one it chose.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--no-defaults", "--datadir="+filepath.Join(dir, "data"), "--socket="+filepath.Join(dir, "sock"),
		fmt.Sprintf("--port=%d", port), "--bind-address=127.0.0.1", "--skip-grant-tables", "--user=root",
		"--innodb-buffer-pool-size=16M", "--skip-log-bin")
	cmd.Args = append(cmd.Args, extra...)
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan bool, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "ready for connections") {
				ready <- true
				io.Copy(io.Discard, stderr)
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("mariadbd exited before it was ready:\n%s", log.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mariadbd not ready after 60 s")
	}
	return port
}

func fiberIOMySQLConfig(on bool, php []string) string {
	yaml := fiberIOConfig(on, "")
	if len(php) == 0 {
		return yaml
	}
	return strings.Replace(yaml, `["php", `, `["php", "`+strings.Join(php, `", "`)+`", `, 1)
}

// PDO MySQL, unmodified: mysqlnd opens its connection through PHP's tcp transport and reads
// through the stream, so with pool.fiber_io eight requests each waiting in a query are all
// in MariaDB at once in ONE worker (the server's process list shows the eight, counted by a
// ninth request on the same worker), and end when their queries are killed. Without it,
// eight SELECT SLEEP(0.05) take eight times 50 ms.
func TestFiberIOPDOMySQL(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	port := startMariaDB(t)
	const n = 8
	t.Run("on", func(t *testing.T) {
		s := startFerry(t, fiberIOMySQLConfig(true, php))
		done := make(chan error, 1)
		var bodies []string
		go func() {
			var err error
			bodies, err = fetchAll(n, func(i int) string { return fmt.Sprintf("%s/pdo?port=%d&tag=on&s=30", s.url, port) })
			done <- err
		}()
		waiting := ""
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			resp, body := get(t, fmt.Sprintf("%s/pdo-waiting?port=%d&tag=on", s.url, port))
			expectStatus(t, resp, body, 200)
			if waiting = body; waiting == fmt.Sprint(n) {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling MariaDB's process list: no event to wait on
		}
		if waiting != fmt.Sprint(n) {
			t.Fatalf("MariaDB ran %s of the %d queries at once, want all\n%s", waiting, n, s.logText())
		}
		resp, body := get(t, fmt.Sprintf("%s/pdo-release?port=%d&tag=on", s.url, port))
		expectStatus(t, resp, body, 200)
		if err := <-done; err != nil {
			t.Fatalf("%v\n%s", err, s.logText())
		}
		for i, b := range bodies {
			if b != "interrupted" {
				t.Fatalf("request %d answered %q, want its killed query's error", i, b)
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		s := startFerry(t, fiberIOMySQLConfig(false, php))
		start := time.Now()
		for i, b := range getAll(t, n, func(i int) string { return fmt.Sprintf("%s/pdo?port=%d&tag=off&s=0.05", s.url, port) }) {
			if b != "slept 0" {
				t.Fatalf("request %d answered %q", i, b)
			}
		}
		if took := time.Since(start); took < n*50*time.Millisecond {
			t.Fatalf("%d SELECT SLEEP(0.05) in one worker without fiber_io took %v: not serialized", n, took)
		}
	})
}
