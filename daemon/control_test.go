package daemon

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ckfs-dev/ckfs/workspace"
)

// startControl serves a control socket with handle in a temp directory.
func startControl(t testing.TB, handle func(workspace.Request) workspace.Reply) string {
	dir := t.TempDir()
	sock := filepath.Join(dir, "control.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	go serveControl(ln, &conns, slog.New(slog.DiscardHandler), handle)
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	return dir
}

// A malformed request gets an error reply, and the daemon keeps serving.
func TestControlMalformedRequests(t *testing.T) {
	store := startControl(t, func(r workspace.Request) workspace.Reply { return workspace.Reply{OK: true, ID: r.ID} })
	c, err := net.Dial("unix", workspace.SocketPath(store))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, line := range []string{`not json`, `{"op":`, `[1,2]`, `{"op":"open","id":"ok-1"}`, "\x00\xff", `{"op":"open","id":"ok-2"}`} {
		if _, err := c.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		b, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no reply to %q: %v", line, err)
		}
		var rep workspace.Reply
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("reply to %q is not JSON: %s", line, b)
		}
		wantOK := strings.HasPrefix(line, `{"op":"open"`)
		if rep.OK != wantOK || (!wantOK && !strings.Contains(rep.Error, "malformed request")) {
			t.Errorf("reply to %q: %+v", line, rep)
		}
	}
	// The socket still answers a new client.
	rep, err := workspace.Call(store, workspace.Request{Op: "status", ID: "again"})
	if err != nil || rep.ID != "again" {
		t.Fatalf("after malformed requests: %+v %v", rep, err)
	}
}

// An oversized request is refused with an error reply, not a crash.
func TestControlOversizedRequest(t *testing.T) {
	store := startControl(t, func(workspace.Request) workspace.Reply { return workspace.Reply{OK: true} })
	c, err := net.Dial("unix", workspace.SocketPath(store))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Write([]byte(`{"op":"open","label":"` + strings.Repeat("x", 2*workspace.MaxRequest) + "\"}\n"))
	var rep workspace.Reply
	if err := json.NewDecoder(c).Decode(&rep); err != nil || rep.OK || !strings.Contains(rep.Error, "malformed") {
		t.Fatalf("oversized request: %+v %v", rep, err)
	}
}

func FuzzControlRequest(f *testing.F) {
	f.Add([]byte(`{"op":"open","id":"toolu_01","tool":"Bash","label":"sed"}`))
	f.Add([]byte(`{"op":"rewind","rewind":{"target":3,"apply":true}}`))
	f.Add([]byte(`{"op":1}`))
	store := startControl(f, func(r workspace.Request) workspace.Reply { return workspace.Reply{OK: r.Op != "", ID: r.ID} })
	f.Fuzz(func(t *testing.T, line []byte) {
		if strings.ContainsAny(string(line), "\n") {
			return
		}
		c, err := net.Dial("unix", workspace.SocketPath(store))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(append(line, '\n'))
		var rep workspace.Reply
		if err := json.NewDecoder(c).Decode(&rep); err != nil {
			t.Fatalf("no reply to %q: %v", line, err)
		}
	})
}
