package english

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}, {-1, "-1 files"}} {
		if got := Count(c.n, "file", "files"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if Noun(1, "is", "are") != "is" || Noun(3, "is", "are") != "are" {
		t.Error("Noun picks the wrong form")
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 512: "512B", 1024: "1KiB", 1536: "1.5KiB", 16 << 20: "16MiB", 17000000: "16.2MiB", 3 << 40: "3TiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
