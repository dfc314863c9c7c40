package multipart

import (
	"errors"
	"fmt"
	"os"
)

// Upload is one spooled file part, sent as [field, client name, type, path,
// error, size]. Name is the file name as the client sent it, directories
// included (PHP's full_path); ErrCode is PHP's UPLOAD_ERR_* value (4 for an
// empty file input).
type Upload struct {
	Field, Name, Type, Path string
	Size                    int64
	ErrCode                 int
}

// Limits bound what one multipart body may create.
type Limits struct {
	Dir            string   // temp dir for file parts; "" = os.TempDir()
	MaxFiles       int      // file parts (PHP max_file_uploads); 0 = no file parts allowed
	MaxParts       int      // parts of any kind
	MaxHeaderBytes int      // one part's header block
	MaxDiskBytes   int64    // total bytes written to disk for this request
	MaxFieldBytes  int64    // total bytes of non-file field values kept in memory
	Forbid         []string // file name extensions refused (case-insensitive, e.g. ".php")
}

// LimitError says which of Limits a body broke.
type LimitError struct {
	What  string // one of the limit* constants
	Limit int64  // the limit broken; 0 for limitExtension
	Name  string // the refused file name, for limitExtension
}

const (
	limitParts     = "parts"
	limitFiles     = "files"
	limitHeader    = "part header bytes"
	limitDisk      = "file bytes"
	limitFields    = "field bytes"
	limitExtension = "extension"
)

func (e *LimitError) Error() string {
	if e.What == limitExtension {
		return fmt.Sprintf("multipart: file name %q has a refused extension", e.Name)
	}
	return fmt.Sprintf("multipart: more %s than the limit of %d", e.What, e.Limit)
}

// Status is the HTTP answer for the refusal. Byte totals get 413 as nginx
// answers a body over client_max_body_size; counts, a part's header block and
// extensions get 400, as docs/config.md promises.
func (e *LimitError) Status() int {
	if e.What == limitDisk || e.What == limitFields {
		return 413
	}
	return 400
}

// ErrMalformed wraps every error caused by the body's syntax (400). Any other
// error from Read is the server's (reading the spool, writing temp files).
var ErrMalformed = errors.New("malformed multipart body")

func malformed(why string) error { return fmt.Errorf("%w: %s", ErrMalformed, why) }

// Remove deletes the temp files of files; entries without one are skipped.
func Remove(files []Upload) {
	for _, f := range files {
		if f.Path != "" {
			os.Remove(f.Path)
		}
	}
}
