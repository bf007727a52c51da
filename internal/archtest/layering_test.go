// Package archtest enforces the layering that docs/design.md draws: its
// table of rooms is the allow-list. Each package of the module may import
// only the packages its "uses" cell names (before a dash), the leaf
// helpers every package may use, and nothing that cell forbids after the
// dash ("never `fusefs`"), however indirectly. A package missing from the
// table fails, and so does a row naming a package that does not exist.
package archtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ckfs-dev/ckfs"

// exempt are the packages that are not rooms of the design: tools and
// tests, which may use anything.
var exempt = []string{"bench/", "integration", "internal/archtest", "internal/gendocs", "internal/testenv", "cas/castest"}

// rule is one row of the table.
type rule struct {
	any       bool     // "everything above", "and the rest"
	allowed   []string // packages it may import (a name ending in "/" is a prefix)
	forbidden []string // packages it must never link, directly or not
	leaf      bool     // every package may use it
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readRules parses the table of rooms in docs/design.md.
func readRules(t *testing.T) map[string]*rule {
	b, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]*rule{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		job, uses := cells[2], cells[3]
		r := &rule{leaf: strings.Contains(job+uses, "every package may use it")}
		allowed, never, _ := strings.Cut(uses, "—")
		r.any = strings.Contains(allowed, "everything above") || strings.Contains(allowed, "and the rest")
		for _, m := range backticked.FindAllStringSubmatch(allowed, -1) {
			r.allowed = append(r.allowed, strings.TrimSuffix(m[1], "…"))
		}
		for _, m := range backticked.FindAllStringSubmatch(never, -1) {
			r.forbidden = append(r.forbidden, m[1])
		}
		rules[name] = r
	}
	if len(rules) < 10 {
		t.Fatalf("docs/design.md: found %d rows in the table of rooms; has its shape changed?", len(rules))
	}
	return rules
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func matches(dep string, names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool {
		return dep == n || (strings.HasSuffix(n, "/") && strings.HasPrefix(dep, n))
	})
}

func TestLayering(t *testing.T) {
	rules := readRules(t)
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var leaves []string
	for name, r := range rules {
		if r.leaf {
			leaves = append(leaves, name)
		}
	}
	seen := map[string]bool{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module+"/")
		seen[name] = true
		if slices.ContainsFunc(exempt, func(e string) bool { return name == e || (strings.HasSuffix(e, "/") && strings.HasPrefix(name, e)) }) {
			continue
		}
		r, ok := rules[name]
		if !ok {
			t.Errorf("package %s has no row in docs/design.md's table of rooms: add one (its job, what it uses)", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module+"/")
			if !ours || r.any || matches(dep, r.allowed) || (matches(dep, leaves) && dep != name) {
				continue
			}
			t.Errorf("%s imports %s, which docs/design.md does not list among what %s uses", name, dep, name)
		}
		for _, d := range p.Deps {
			if dep, ours := strings.CutPrefix(d, module+"/"); ours && matches(dep, r.forbidden) {
				t.Errorf("%s links %s (through its imports), which docs/design.md says it never does", name, dep)
			}
		}
	}
	for name := range rules {
		if !seen[name] {
			t.Errorf("docs/design.md has a row for %s, which go list does not find", name)
		}
	}
}
