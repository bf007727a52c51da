package index

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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

// ParseRecord decodes and validates one line (without its newline).
func ParseRecord(line []byte) (*Record, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		// Report a version mismatch before field errors: an unknown
		// version may well have unknown fields.
		var probe struct {
			V int `json:"v"`
		}
		if json.Unmarshal(line, &probe) == nil && probe.V != Version {
			return nil, fmt.Errorf("%w %d (this ckfs reads version %d; upgrade ckfs to read this timeline)", ErrVersion, probe.V, Version)
		}
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the record")
	}
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
func Load(path string) (recs []Record, tail *LineError, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	defer f.Close()
	err = Scan(f, func(r *Record) error { recs = append(recs, *r); return nil })
	if le, ok := errors.AsType[*LineError](err); ok {
		return recs, le, nil
	}
	if err != nil {
		return recs, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return recs, nil, nil
}
