package baseline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// LockName is the name of the store's lock file.
const LockName = ".tailgate.lock"

// lockStore takes the exclusive lock of the store in dir, waiting while
// another process holds it (after calling waiting, once) until ctx ends
// or wait has passed (safefile.Lock). unlock removes the lock file and
// releases the lock.
func lockStore(ctx context.Context, dir string, wait time.Duration, waiting func(LockWait)) (unlock func(), err error) {
	path := filepath.Join(dir, LockName)
	for {
		// Never through a symlink: a planted .tailgate.lock would make
		// root create or truncate whatever it points at.
		f, err := safefile.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, safefile.ErrSymlink) || errors.Is(err, safefile.ErrFIFO) || errors.Is(err, safefile.ErrDevice) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%w: %s %w; remove it", ErrLink, path, err)
		}
		if err != nil {
			return nil, err
		}
		err = safefile.Lock(ctx, f, unix.LOCK_EX, wait, func(h safefile.Holder) {
			if waiting != nil {
				waiting(LockWait{Lock: path, Holder: h})
				waiting = nil
			}
		})
		if err != nil {
			f.Close()
			return nil, err
		}
		// The holder before us removes the file as it unlocks: if it did
		// after we opened it, our lock is on a file no one else will
		// open. Start over on the path's file.
		held, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		// Who holds it, for the message of a process that waits.
		f.Truncate(0)
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		return func() {
			os.Remove(path) // still holding the lock: see above
			f.Close()
		}, nil
	}
}
