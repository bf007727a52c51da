package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/klauspost/compress/zstd"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// A shared bucket is anyone's: another writer replaces every object of a
// pushed workspace with a decompression bomb (a few KiB whose header and
// zstd frame really hold 512 MiB) and its head with 8 MiB, then 65 MiB, of nonsense.
// ckfs restore, log and show, run against the real SeaweedFS, fail with
// an error that names what is wrong, write nothing into the target, and
// stay small: their peak memory is measured (the kernel's maxrss), not
// assumed.
func TestHostileBucketStaysBounded(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	testenv.RequireFUSE(t)
	endpoint := testenv.SeaweedFS(t, "ckfs")
	url := "s3://ckfs/hostile"
	creds := []string{"AWS_ACCESS_KEY_ID=ckfs-test", "AWS_SECRET_ACCESS_KEY=ckfs-test", "AWS_ENDPOINT_URL=" + endpoint}
	w := newWorkspace(t, `printf 'one\n' > a.txt; mkdir d; printf 'two\n' > d/b.txt`)
	w.extraEnv = creds
	w.mount()
	w.ckfs("remote", "add", "shared", url)
	w.window("call_1", `printf 'three\n' >> a.txt; printf 'new\n' > d/c.txt`)
	var pushed struct{ Workspace string }
	if out := w.ckfs("push", "--json"); json.Unmarshal([]byte(out), &pushed) != nil || pushed.Workspace == "" {
		t.Fatalf("push --json:\n%s", out)
	}
	w.unmount()

	u := strings.TrimPrefix(endpoint, "http://")
	mc, err := minio.New(u, &minio.Options{Creds: credentials.NewStaticV4("ckfs-test", "ckfs-test", "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bomb := zstdBomb(t, 512<<20)
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes; the test wants a small one", len(bomb))
	}
	put := func(key string, data []byte) {
		if _, err := mc.PutObject(ctx, "ckfs", key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	objects := 0
	for o := range mc.ListObjects(ctx, "ckfs", minio.ListObjectsOptions{Prefix: "hostile/objects/", Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		put(o.Key, bomb)
		objects++
	}
	if objects == 0 {
		t.Fatal("the push left no objects in the bucket")
	}

	elsewhere := t.TempDir()
	run := func(args ...string) (string, int, int64) {
		t.Helper()
		env := append(os.Environ(), append(creds, "CKFS_HOME="+filepath.Join(elsewhere, "home"), "XDG_CACHE_HOME="+filepath.Join(elsewhere, "cache"), "NO_COLOR=1")...)
		return peakOf(t, elsewhere, env, ckfsBin, args...)
	}
	const bound = 256 << 20
	check := func(what string, args ...string) string {
		t.Helper()
		out, code, rss := run(args...)
		t.Logf("%s: exit %d, peak memory %d MiB", what, code, rss>>20)
		if code == 0 {
			t.Errorf("%s over a hostile bucket succeeded:\n%s", what, out)
		}
		if rss > bound {
			t.Errorf("%s used %d MiB at its peak (a bomb declares 512 MiB; the bound is %d MiB)", what, rss>>20, bound>>20)
		}
		return out
	}
	target := filepath.Join(elsewhere, "restored")
	out := check("restore", "restore", "--remote", url, "--workspace", pushed.Workspace, target)
	if !strings.Contains(out, "object blake3:") || !strings.Contains(out, "damaged in the bucket") {
		t.Errorf("restore does not name the bad object:\n%s", out)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("a failed restore left %d entries in its target", len(entries))
	}
	check("show", "show", "--remote", url, "--workspace", pushed.Workspace, "call_1:a.txt")

	// The head: 8 MiB where a small JSON document belongs.
	put("hostile/workspaces/"+pushed.Workspace+"/head.json", bytes.Repeat([]byte("["), 8<<20))
	out = check("log", "log", "--remote", url, "--workspace", pushed.Workspace)
	if !strings.Contains(out, "head.json") {
		t.Errorf("log does not name the bad head:\n%s", out)
	}
	// A head larger than any ckfs writes is refused unread.
	put("hostile/workspaces/"+pushed.Workspace+"/head.json", bytes.Repeat([]byte(" "), 65<<20))
	out = check("log", "log", "--remote", url, "--workspace", pushed.Workspace)
	if !strings.Contains(out, "head.json") || !strings.Contains(out, "did not write") {
		t.Errorf("log does not refuse a 65 MiB head by its size:\n%s", out)
	}
}

// zstdBomb is an object file (docs/format.md section 2: "CKOB", version 1,
// codec 1 = zstd, the content's size, then one zstd frame) whose frame
// really holds size zero bytes. It is made as a stream, so the test
// process never holds the content: a child's peak memory as the kernel
// reports it starts from its parent's when the parent execs it.
func zstdBomb(t *testing.T, size int64) []byte {
	t.Helper()
	var body bytes.Buffer
	hdr := make([]byte, 16)
	copy(hdr, "CKOB")
	hdr[4], hdr[5] = 1, 1
	binary.LittleEndian.PutUint64(hdr[8:], uint64(size))
	body.Write(hdr)
	zw, err := zstd.NewWriter(&body, zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for n := int64(0); n < size; n += int64(len(zeros)) {
		if _, err := zw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return body.Bytes()
}

// peakHelperEnv makes the test binary a small helper that runs one
// command and reports its peak memory (see peakOf).
const peakHelperEnv = "CKFS_PEAK_HELPER"

// peakOf runs a command and returns its output, exit status and peak
// memory in bytes. The kernel's maxrss of a process starts at its
// parent's when the parent execs it, and this test process is large: so
// the command is started by a fresh, small copy of the test binary, whose
// child's maxrss is the command's own.
func peakOf(t *testing.T, dir string, env []string, name string, args ...string) (string, int, int64) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self, append([]string{name}, args...)...)
	c.Dir, c.Env = dir, append(env, peakHelperEnv+"=1")
	var out, report bytes.Buffer
	c.Stdout, c.Stderr = &out, &report
	c.Run()
	var peak int64
	var code int
	if _, err := fmt.Sscanf(report.String(), "exit %d peak %d", &code, &peak); err != nil {
		t.Fatalf("the peak helper reported %q: %v", report.String(), err)
	}
	return out.String(), code, peak
}

// peakHelper runs os.Args[1:] with stdout and stderr both to stdout, then
// writes "exit N peak BYTES" to stderr and exits.
func peakHelper() {
	c := exec.Command(os.Args[1], os.Args[2:]...)
	c.Stdout, c.Stderr = os.Stdout, os.Stdout
	c.Env = os.Environ()
	c.Run()
	code, peak := -1, int64(0)
	if c.ProcessState != nil {
		code = c.ProcessState.ExitCode()
		peak = c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	fmt.Fprintf(os.Stderr, "exit %d peak %d", code, peak)
	os.Exit(0)
}
