package ui

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress is a progress bar on a terminal and nothing elsewhere, so
// scripts and logs never see control characters.
type Progress struct{ bar *progressbar.ProgressBar }

// NewProgress returns a byte progress bar drawn on w when w is a terminal
// (and the work is large enough to be worth one); silent otherwise. total
// is only called on a terminal.
func NewProgress(w io.Writer, what string, total func() int64) *Progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &Progress{}
	}
	n := total()
	if n < 64<<20 {
		return &Progress{}
	}
	return &Progress{bar: progressbar.NewOptions64(n,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100e6),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p *Progress) Add64(n int64) {
	if p.bar != nil {
		p.bar.Add64(n)
	}
}

func (p *Progress) Finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
