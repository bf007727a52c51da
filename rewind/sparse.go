package rewind

import (
	"bytes"
	"io"
	"os"
)

// sparseBlock is the unit copySparse skips when it holds only zeros: the
// block size of common filesystems.
const sparseBlock = 4096

// copySparse writes content to the new, empty file f, leaving a hole for
// every block of zeros instead of writing it, so a sparse file comes back
// sparse (and a run of zeros costs no disk). The size is set at the end.
func copySparse(f *os.File, content io.Reader) error {
	buf := make([]byte, 256<<10)
	var off int64
	for {
		n, err := io.ReadFull(content, buf)
		for i := 0; i < n; i += sparseBlock {
			b := buf[i:min(i+sparseBlock, n)]
			if !allZero(b) {
				if _, werr := f.WriteAt(b, off+int64(i)); werr != nil {
					return werr
				}
			}
		}
		off += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	return f.Truncate(off)
}

var zeroBlock [sparseBlock]byte

func allZero(b []byte) bool { return bytes.Equal(b, zeroBlock[:len(b)]) }
