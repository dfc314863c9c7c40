package main

import (
	"fmt"
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
// directory, without grant tables (root, no password), and returns it with its TCP port
// once it says it is ready for connections. extra are more mariadbd options.
func startMariaDB(t *testing.T, extra ...string) (*serverProc, int) {
	t.Helper()
	bin := os.Getenv("FERRY_TEST_MARIADBD")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("mariadbd"); err != nil {
			t.Skip("mariadbd not found (Debian: mariadb-server), and FERRY_TEST_MARIADBD is not set")
		}
	}
	port := freePort(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--no-defaults", "--datadir="+filepath.Join(dir, "data"), "--socket="+filepath.Join(dir, "sock"),
		fmt.Sprintf("--port=%d", port), "--bind-address=127.0.0.1", "--skip-grant-tables", "--user=root",
		"--innodb-buffer-pool-size=16M", "--skip-log-bin")
	cmd.Args = append(cmd.Args, extra...)
	return startServerProc(t, cmd, "ready for connections"), port
}

func fiberIOMySQLConfig(on bool, php []string) string {
	yaml := fiberIOConfig(on, "")
	if len(php) == 0 {
		return yaml
	}
	return strings.Replace(yaml, `["php", `, `["php", "`+strings.Join(php, `", "`)+`", `, 1)
}

// PDO MySQL and mysqli, unmodified: mysqlnd opens its connection through PHP's tcp
// transport and reads through the stream, so with pool.fiber_io eight requests each waiting
// in a query are all in MariaDB at once in ONE worker (the server's process list shows the
// eight, counted by a ninth request on the same worker), and end when their queries are
// killed. Without it, eight SELECT SLEEP(0.05) take eight times 50 ms.
func TestFiberIOPDOMySQL(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	_, port := startMariaDB(t)
	const n = 8
	for _, via := range []string{"pdo", "mysqli"} {
		t.Run(via+"/on", func(t *testing.T) {
			s := startFerry(t, fiberIOMySQLConfig(true, php))
			tag := via + "on"
			done := inBackground(n, func(int) string { return fmtURL(s, "/%s?port=%d&tag=%s&s=30", via, port, tag) })
			pollUntil(t, s, fmtURL(s, "/pdo-waiting?port=%d&tag=%s", port, tag), fmt.Sprint(n))
			resp, body := get(t, fmtURL(s, "/pdo-release?port=%d&tag=%s", port, tag))
			expectStatus(t, resp, body, 200)
			expectBodies(t, s, <-done, "interrupted")
		})
		t.Run(via+"/off", func(t *testing.T) {
			s := startFerry(t, fiberIOMySQLConfig(false, php))
			start := time.Now()
			expectBodies(t, s, <-inBackground(n, func(int) string { return fmtURL(s, "/%s?port=%d&tag=off&s=0.05", via, port) }), "slept 0")
			if took := time.Since(start); took < n*50*time.Millisecond {
				t.Fatalf("%d SELECT SLEEP(0.05) in one worker without fiber_io took %v: not serialized", n, took)
			}
		})
	}
}

// MariaDB's failures reach the app as they do without the hooks: a refused connect, an
// error reply (1064), and mysqlnd.net_read_timeout shorter than the query ("gone away" after
// it, while the worker serves others with the hooks on).
func TestFiberIOMySQLErrors(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	_, port := startMariaDB(t)
	refused := freePort(t)
	off := map[string]string{}
	for _, on := range []bool{false, true} {
		s := startFerry(t, fiberIOMySQLConfig(on, php))
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			for _, c := range []struct{ path, want string }{
				{fmt.Sprintf("/pdo?port=%d", refused), "error: SQLSTATE[HY000] [2002] Connection refused"},
				{fmt.Sprintf("/pdo-error?port=%d", port), "error: SQLSTATE[42000]: Syntax error or access violation: 1064"},
			} {
				_, body := get(t, s.url+c.path)
				if !strings.HasPrefix(body, c.want) {
					t.Fatalf("%s answered %q, want %q", c.path, body, c.want)
				}
				if !on {
					off[c.path] = body
				} else if body != off[c.path] {
					t.Fatalf("%s answered %q with the hooks on, %q with them off", c.path, body, off[c.path])
				}
			}
			start := time.Now()
			tag := fmt.Sprintf("rt%v", on)
			waiting := inBackground(1, func(int) string { return fmtURL(s, "/pdo?port=%d&tag=%s&s=3&rt=1", port, tag) })
			if on {
				pollUntil(t, s, fmtURL(s, "/pdo-waiting?port=%d&tag=%s", port, tag), "1")
			}
			f := <-waiting
			if took := time.Since(start); f.err != nil || !strings.Contains(f.bodies[0], "2006 MySQL server has gone away") || took < time.Second {
				t.Fatalf("SLEEP(3) with mysqlnd.net_read_timeout=1 answered %q (%v) after %v", f.bodies, f.err, took)
			}
		})
	}
}

// A PDO handle kept in a static and used by two requests at once: the second gets mysqlnd's
// own 2014 (it checks the connection's state before it sends), never bytes of its own in the
// first one's exchange; the first gets its query's answer, and the handle then serves the
// next request.
func TestFiberIOMySQLSharedHandle(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	_, port := startMariaDB(t)
	s := startFerry(t, fiberIOMySQLConfig(true, php))
	first := inBackground(1, func(int) string { return fmtURL(s, "/pdo-shared?port=%d&tag=shone&s=30", port) })
	pollUntil(t, s, fmtURL(s, "/pdo-waiting?port=%d&tag=shone", port), "1")
	if _, body := get(t, fmtURL(s, "/pdo-shared?port=%d&tag=shtwo&s=0", port)); !strings.Contains(body, "2014") {
		t.Fatalf("the second user of a shared PDO answered %q, want mysqlnd's 2014\n%s", body, s.logText())
	}
	get(t, fmtURL(s, "/pdo-release?port=%d&tag=shone", port))
	expectBodies(t, s, <-first, "interrupted")
	if _, body := get(t, fmtURL(s, "/pdo-shared?port=%d&tag=shthree&s=0", port)); body != "slept 0" {
		t.Fatalf("the shared PDO then answered %q, want slept 0\n%s", body, s.logText())
	}
}

// A MariaDB killed (kill -9) while queries wait in it: each request gets PDO's error, the
// worker goes on serving, and a connect after it is refused.
func TestFiberIOMySQLKilledMidQuery(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	d, port := startMariaDB(t)
	s := startFerry(t, fiberIOMySQLConfig(true, php))
	const n = 3
	done := inBackground(n, func(int) string { return fmtURL(s, "/pdo?port=%d&tag=kill&s=30", port) })
	pollUntil(t, s, fmtURL(s, "/pdo-waiting?port=%d&tag=kill", port), fmt.Sprint(n))
	d.kill()
	f := <-done
	if f.err != nil {
		t.Fatalf("%v\n%s", f.err, s.logText())
	}
	for i, b := range f.bodies {
		if !strings.HasPrefix(b, "error: SQLSTATE[HY000]: General error: 2006") {
			t.Fatalf("request %d on a killed MariaDB answered %q, want PDO's 2006", i, b)
		}
	}
	if _, body := get(t, s.url+"/hello"); body != "fiberio" {
		t.Fatalf("the worker then answered %q", body)
	}
	if _, body := get(t, fmtURL(s, "/pdo?port=%d", port)); !strings.Contains(body, "[2002] Connection refused") {
		t.Fatalf("a connect after the kill answered %q", body)
	}
}

// PDO::ATTR_TIMEOUT (mysqlnd's connect timeout) against a port whose accept queue is full:
// "[2002] Connection timed out" after it, as without the hooks; with them, the worker serves
// another request while the connect waits.
func TestFiberIOMySQLConnectTimeout(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	_, port, _ := strings.Cut(fullListener(t), ":")
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			s := startFerry(t, fiberIOMySQLConfig(on, php))
			start := time.Now()
			waiting := inBackground(1, func(int) string { return fmtURL(s, "/pdo?port=%s&ct=1", port) })
			if on {
				servedBeside(t, s.url+"/hello", "fiberio", waiting)
			}
			f := <-waiting
			if took := time.Since(start); f.err != nil || f.bodies[0] != "error: SQLSTATE[HY000] [2002] Connection timed out" || took < time.Second {
				t.Fatalf("PDO::ATTR_TIMEOUT=1 against a full backlog answered %q (%v) after %v", f.bodies, f.err, took)
			}
		})
	}
}
