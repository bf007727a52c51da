package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
)

// unmountedWorkspace is a repository whose store records one window that
// changed main.go from "old" to "new", as a daemon would have written it;
// the disk holds "new". Nothing is mounted: the commands read and rewind
// it in this process.
func unmountedWorkspace(t *testing.T) (store, root string) {
	t.Helper()
	store, root = t.TempDir(), t.TempDir()
	if err := workspace.Init(store, root); err != nil {
		t.Fatal(err)
	}
	s, err := cas.Open(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := func(content string) *index.State {
		h, _, err := s.Put([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(root, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		return &index.State{Hash: h, Size: int64(len(content)), MTime: fi.ModTime().UnixNano(), Mode: 0o644, Type: index.TypeFile}
	}
	w, _, err := index.OpenWriter(store, index.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// main.go was last written long before the window (a file whose
	// mtime is after a checkpoint is unknown there).
	os.WriteFile(filepath.Join(root, "main.go"), []byte("old"), 0o644)
	hourAgo := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(root, "main.go"), hourAgo, hourAgo)
	if err := w.Append(&index.Record{Kind: index.KindOpen, Window: "toolu_1", Tool: "Bash", Label: "sed -i s/old/new/ main.go"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&index.Record{Kind: index.KindBefore, Window: "toolu_1", Path: "main.go", State: state("old")}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "main.go"), []byte("new"), 0o644)
	if err := w.Append(&index.Record{Kind: index.KindAfter, Window: "toolu_1", Path: "main.go", State: state("new")},
		&index.Record{Kind: index.KindClose, Window: "toolu_1"}); err != nil {
		t.Fatal(err)
	}
	return store, root
}

// The reading commands and a rewind, run in process as the CLI runs them:
// log lists the window, show prints each side, verify finds the store
// whole, a preview changes nothing, and the rewind puts main.go back.
func TestCommandsInProcess(t *testing.T) {
	store, root := unmountedWorkspace(t)
	ctx := context.Background()
	t.Chdir(root)
	var out bytes.Buffer

	if err := runLog(ctx, logOptions{Store: store, JSON: true}, &out); err != nil {
		t.Fatal(err)
	}
	var entries []workspace.LogEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil {
		t.Fatalf("log --json: %v\n%s", err, out.String())
	}
	if len(entries) != 1 || entries[0].ID != "toolu_1" || len(entries[0].Files) != 1 || entries[0].Files[0].Path != "main.go" {
		t.Fatalf("log --json: %+v", entries)
	}

	for cp, want := range map[string]string{"toolu_1": "old", "4": "new"} {
		out.Reset()
		if err := runShow(ctx, showOptions{Store: store, Arg: cp + ":main.go"}, &out); err != nil || out.String() != want {
			t.Errorf("show %s:main.go = %q, %v; want %q", cp, out.String(), err, want)
		}
	}

	out.Reset()
	var stderr bytes.Buffer
	if err := runVerify(ctx, verifyOptions{workspaceArg: workspaceArg{Store: store, Dir: root}}, &out, &stderr); err != nil {
		t.Errorf("verify: %v\n%s%s", err, out.String(), stderr.String())
	}

	out.Reset()
	if err := runRewind(ctx, rewindOptions{Store: store, Last: 1}, &out); err != nil {
		t.Fatalf("rewind preview: %v\n%s", err, out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "main.go")); string(b) != "new" || !strings.Contains(out.String(), "main.go") {
		t.Fatalf("the preview changed main.go to %q, or does not name it:\n%s", b, out.String())
	}
	out.Reset()
	if err := runRewind(ctx, rewindOptions{Store: store, Last: 1, Files: true}, &out); err != nil {
		t.Fatalf("rewind --files: %v\n%s", err, out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "main.go")); string(b) != "old" {
		t.Fatalf("after the rewind main.go is %q, want old\n%s", b, out.String())
	}
}
