package testenv

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SeaweedFS starts a SeaweedFS server (weed mini) for the test, every
// port on 127.0.0.1, with the bucket named bucket, and returns the S3
// endpoint ("http://127.0.0.1:PORT"). The pinned weed is built from the
// Go module proxy by scripts/seaweedfs the first time (minutes) and cached.
// The server is stopped by its PID when the test ends. Where it cannot be
// built or started the test is skipped, unless CKFS_REQUIRE_S3=1 (CI),
// where that is a failure.
func SeaweedFS(t testing.TB, bucket string) string {
	t.Helper()
	if len(bucket) < 3 {
		t.Fatalf("bucket name %q: S3 wants at least 3 characters", bucket)
	}
	weed := RequireSeaweedFS(t)
	dir := t.TempDir()
	ports := freePorts(t, 10)
	NoteWeedPorts(ports)
	s3 := ports[0]
	args := weedArgs(dir, bucket, ports)
	log, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(weed, args...)
	cmd.Dir = dir
	// weed puts its logs and some volume files in the temp directory: the
	// test's, so that they go with it.
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		seaweedUnavailable(t, err.Error())
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stopWeed(cmd, exited)
		log.Close()
		removeWeedSockets(ports)
	})
	endpoint := "http://127.0.0.1:" + s3
	deadline := time.Now().Add(90 * time.Second)
	for {
		// Ready when the bucket answers (weed mini creates it once its
		// filer is up).
		if bucketReady(endpoint, bucket) {
			return endpoint
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
			seaweedUnavailable(t, "weed mini exited: "+LastLines(string(b), 10))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
			t.Fatalf("SeaweedFS did not serve bucket %s within 90 s: %s", bucket, LastLines(string(b), 10))
		}
	}
}

// RequireSeaweedFS returns the path of the pinned weed binary, built by
// scripts/seaweedfs from the Go module proxy the first time (minutes) and
// cached. Where it cannot be built the test is skipped, unless
// CKFS_REQUIRE_S3=1 (CI), where that is a failure.
func RequireSeaweedFS(t testing.TB) string {
	t.Helper()
	script, err := RepoFile("scripts/seaweedfs")
	if err != nil {
		seaweedUnavailable(t, err.Error())
	}
	var stderr bytes.Buffer
	build := exec.Command("bash", script)
	build.Stderr = &stderr
	out, err := build.Output()
	if err != nil {
		seaweedUnavailable(t, fmt.Sprintf("scripts/seaweedfs: %v: %s", err, LastLines(stderr.String(), 5)))
	}
	return strings.TrimSpace(string(out))
}

func seaweedUnavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CKFS_REQUIRE_S3") == "1" {
		t.Fatalf("CKFS_REQUIRE_S3=1 but SeaweedFS is not available: %s", why)
	}
	t.Skipf("SeaweedFS is not available (%s): set CKFS_REQUIRE_S3=1 to make this a failure", why)
}

// NoteWeedPorts appends the ports of a SeaweedFS server a test starts to
// the file CKFS_TEST_WEED_PORTS names, when it is set (scripts/test sets
// it): weed names the gRPC sockets it leaves in /tmp by port, so that the
// test command checks the sockets of its own servers only, and another
// server on the machine is none of its business.
func NoteWeedPorts(ports []string) {
	p := os.Getenv("CKFS_TEST_WEED_PORTS")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, strings.Join(ports, "\n"))
}

// weedArgs are weed mini's arguments: its files in dir, the bucket made,
// every service on 127.0.0.1 at one of ports.
func weedArgs(dir, bucket string, ports []string) []string {
	return []string{"mini", "-dir=" + dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false", "-webdav=false",
		"-bucket=" + bucket,
		"-s3.port=" + ports[0], "-s3.port.grpc=" + ports[1], "-master.port=" + ports[2], "-master.port.grpc=" + ports[3],
		"-volume.port=" + ports[4], "-volume.port.grpc=" + ports[5], "-filer.port=" + ports[6], "-filer.port.grpc=" + ports[7],
		"-admin.port=" + ports[8], "-admin.port.grpc=" + ports[9], "-admin.port.legacy=0",
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-filer.localSocket=" + filepath.Join(dir, "filer.sock"), "-s3.localSocket=" + filepath.Join(dir, "s3.sock"),
	}
}

// stopWeed stops the server's process group, killing it after 15 s.
func stopWeed(cmd *exec.Cmd, exited <-chan struct{}) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// removeWeedSockets removes the gRPC sockets weed mini names itself, in
// /tmp whatever TMPDIR says, and leaves behind: the ports are this
// server's, so the sockets are too.
func removeWeedSockets(ports []string) {
	for i, service := range map[int]string{1: "s3", 3: "master", 5: "volume", 7: "filer", 9: "admin"} {
		p := fmt.Sprintf("/tmp/seaweedfs-%s-grpc-%s.sock", service, ports[i])
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			os.Remove(p)
		}
	}
}

// bucketReady reports whether an anonymous listing of the bucket succeeds.
func bucketReady(endpoint, bucket string) bool {
	r, err := http.Get(endpoint + "/" + bucket + "?list-type=2&max-keys=1")
	if err != nil {
		return false
	}
	r.Body.Close()
	return r.StatusCode == http.StatusOK
}

// freePorts returns n ports that were free a moment ago.
func freePorts(t testing.TB, n int) []string {
	var out []string
	var ls []net.Listener
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// RepoFile finds rel in the repository the test runs in.
func RepoFile(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(p); err != nil {
				return "", err
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s: not inside the repository", rel)
		}
		dir = parent
	}
}

// LastLines returns the last n lines of s (a failed tool's output, for a
// test's message).
func LastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
