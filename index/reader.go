package index

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// maxLine bounds one record line. Records are small; a longer line is
// corruption, not data.
const maxLine = 1 << 20

// LineError reports the first line of a timeline that is not a valid record.
// Reading stops there: everything before it is good.
type LineError struct {
	Line   int   // 1-based line number
	Offset int64 // byte offset of the start of the line
	Torn   bool  // the line is the last one and has no newline: a torn append
	Err    error
}

func (e *LineError) Error() string {
	if e.Torn {
		return fmt.Sprintf("line %d: torn last line (an append was interrupted): %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Repair is the error for a command stopped by this bad line of the
// timeline at path: where, what, and the command that repairs it.
func (e *LineError) Repair(path string) error {
	return fmt.Errorf("timeline %s: %w: run ckfs verify --repair (with the workspace unmounted; it moves the bad line, verbatim, to %s/ in the store and keeps every good record)", path, e, QuarantineDir)
}

// ParseRecord decodes and validates one line (without its newline).
// Fields a version-1 reader does not know are ignored: a writer that adds
// meaning a reader must not miss raises the version instead.
func ParseRecord(line []byte) (*Record, error) {
	if r, ok := fastParse(line); ok {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		return r, nil
	}
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		// Report a version mismatch first: an unknown version may well
		// be laid out differently.
		var probe struct {
			V int `json:"v"`
		}
		if json.Unmarshal(line, &probe) == nil && probe.V != Version {
			return nil, fmt.Errorf("%w %d (this ckfs reads version %d; upgrade ckfs to read this timeline)", ErrVersion, probe.V, Version)
		}
		return nil, err
	}
	p, err := DecodePath(r.Path)
	if err != nil {
		return nil, err
	}
	r.Path = p
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Scan reads records from r and calls fn for each, in order. It stops at the
// first line that does not parse, or whose seq does not increase, and
// returns a *LineError for it; a non-nil error from fn is returned as is.
func Scan(r io.Reader, fn func(*Record) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	var last uint64
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		for err == bufio.ErrBufferFull && len(b) < maxLine {
			// Long line: collect it.
			more := append([]byte(nil), b...)
			b, err = br.ReadSlice('\n')
			b = append(more, b...)
		}
		if len(b) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			if err == bufio.ErrBufferFull {
				return &LineError{Line: line, Offset: off, Err: fmt.Errorf("line longer than %d bytes", maxLine)}
			}
			return err
		}
		torn := err == io.EOF // data without a final newline
		content := bytes.TrimSuffix(b, []byte("\n"))
		if torn {
			return &LineError{Line: line, Offset: off, Torn: true, Err: errors.New("no newline at end")}
		}
		rec, perr := ParseRecord(content)
		if perr == nil && rec.Seq <= last {
			perr = fmt.Errorf("seq %d does not follow seq %d", rec.Seq, last)
		}
		if perr != nil {
			return &LineError{Line: line, Offset: off, Err: perr}
		}
		last = rec.Seq
		if err := fn(rec); err != nil {
			return err
		}
		off += int64(len(b))
	}
}

// Load reads the timeline file at path. It returns the records before the
// first bad line, and that line's error as tail (nil if every line is good;
// tail.Torn if only an interrupted last append is missing). err is for
// failures to read the file at all. A missing file is an empty timeline.
//
// Load parses the lines on every CPU at once; the result is the same as
// Scan's.
func Load(path string) (recs []Record, tail *LineError, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	// The cache holds the records of a verified prefix; only the rest is
	// parsed, and a load that parsed many records leaves a new cache.
	cpath := CachePath(path)
	cached, covered := readCache(cpath, data)
	var after uint64
	if n := len(cached); n > 0 {
		after = cached[n-1].Seq
	}
	recs, tail, err = parseAll(data[covered:], after)
	if err != nil {
		return nil, nil, err
	}
	if tail != nil {
		tail.Line += len(cached)
		tail.Offset += int64(covered)
	}
	if len(recs) >= cacheEvery {
		end := len(data)
		if tail != nil {
			end = int(tail.Offset)
		}
		all := append(cached, recs...)
		if end > 0 {
			writeCache(cpath, data, end, all)
		}
		return all, tail, nil
	}
	if cached == nil {
		return recs, tail, nil
	}
	return append(cached, recs...), tail, nil
}

// parseAll parses a timeline held in memory: data starts at a line
// boundary, and its first record must follow seq after.
func parseAll(data []byte, after uint64) ([]Record, *LineError, error) {
	var starts, ends []int // each complete line is data[starts[i]:ends[i]], ends[i] its newline
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		starts, ends = append(starts, off), append(ends, off+nl)
		off += nl + 1
	}
	recs := make([]Record, len(starts))
	errs := make([]error, len(starts))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(starts)/1000))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := interner{}
			for i := w; i < len(starts); i += workers {
				line := data[starts[i]:ends[i]]
				if len(line) > maxLine {
					errs[i] = fmt.Errorf("line longer than %d bytes", maxLine)
					continue
				}
				if fastParseInto(line, &recs[i], in) {
					errs[i] = recs[i].Validate()
					continue
				}
				r, err := ParseRecord(line)
				if err != nil {
					errs[i] = err
					continue
				}
				recs[i] = *r
			}
		}()
	}
	wg.Wait()
	last := after
	for i := range starts {
		err := errs[i]
		if err == nil && recs[i].Seq <= last {
			err = fmt.Errorf("seq %d does not follow seq %d", recs[i].Seq, last)
		}
		if err != nil {
			return recs[:i], &LineError{Line: i + 1, Offset: int64(starts[i]), Err: err}, nil
		}
		last = recs[i].Seq
	}
	end := 0
	if n := len(ends); n > 0 {
		end = ends[n-1] + 1
	}
	if end < len(data) {
		return recs, &LineError{Line: len(starts) + 1, Offset: int64(end), Torn: true, Err: errors.New("no newline at end")}, nil
	}
	return recs, nil, nil
}
