package migrate

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/pki"
)

// ImageOffer is what the source agent says about an image it sends.
type ImageOffer struct {
	AllocID     string
	MigrationID string
	// Token is the migration's bearer secret, which the target checks
	// against the one the server gives it.
	Token           string
	CheckpointBytes int64
	CheckpointMs    int64
}

// ImageReceipt is the target's answer: the migration's outcome once the
// target restored the tasks (committed), or why it did not.
type ImageReceipt struct {
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason,omitempty"`
	TransferMs int64  `json:"transferMs"`
	RestoreMs  int64  `json:"restoreMs"`
	CommitMs   int64  `json:"commitMs"`
}

// ImageTransport carries a migration image from the source agent to the
// target agent. The HTTP one below uses the agents' own API with the
// migration's bearer token and a SHA-256 of the stream; mutual TLS with
// node identities (issue 8) slots in as its http.Client's transport and
// the receiving server's TLS config, without touching the migration.
type ImageTransport interface {
	// Send streams image (a tar of the tasks' image directories) to the
	// agent at addr and returns the target's receipt once it restored the
	// tasks and the migration's outcome is known, or an error when the
	// outcome is not known to the target (the caller asks the server).
	Send(ctx context.Context, addr string, offer ImageOffer, image io.Reader) (*ImageReceipt, error)
}

// Headers of an image transfer.
const (
	headerAllocID         = "X-Strata-Alloc"
	headerCheckpointBytes = "X-Strata-Checkpoint-Bytes"
	headerCheckpointMs    = "X-Strata-Checkpoint-Ms"
	trailerImageSHA256    = "X-Strata-Image-Sha256"
)

// HTTPImageTransport sends images with PUT /v1/agent/migrations/{id}.
type HTTPImageTransport struct {
	Client *http.Client // nil: a client without overall timeout
}

// DefaultTransport is the agents' HTTP API as the image transport: over
// mutual TLS when the agent has TLS files (it presents its own agent
// certificate and accepts only a peer with an agent certificate of the
// cell's CA: the target is an agent), plaintext otherwise.
func DefaultTransport(files *pki.Files) (ImageTransport, error) {
	if files == nil {
		return HTTPImageTransport{}, nil
	}
	cfg, err := files.ClientConfig(pki.RoleAgent)
	if err != nil {
		return nil, fmt.Errorf("migration transport TLS: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return HTTPImageTransport{Client: &http.Client{Transport: tr}}, nil
}

func (t HTTPImageTransport) Send(ctx context.Context, addr string, offer ImageOffer, image io.Reader) (*ImageReceipt, error) {
	sum := &hashingReader{r: image, h: sha256.New()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut,
		strings.TrimRight(addr, "/")+"/v1/agent/migrations/"+url.PathEscape(offer.MigrationID), sum)
	if err != nil {
		return nil, err
	}
	req.ContentLength = -1 // chunked, so the digest can follow as a trailer
	req.Header.Set("Authorization", "Bearer "+offer.Token)
	req.Header.Set("Content-Type", "application/x-tar")
	req.Header.Set(headerAllocID, offer.AllocID)
	req.Header.Set(headerCheckpointBytes, strconv.FormatInt(offer.CheckpointBytes, 10))
	req.Header.Set(headerCheckpointMs, strconv.FormatInt(offer.CheckpointMs, 10))
	req.Trailer = http.Header{trailerImageSHA256: nil}
	sum.onEOF = func() { req.Trailer.Set(trailerImageSHA256, hex.EncodeToString(sum.h.Sum(nil))) }
	client := t.Client
	if client == nil {
		client = &http.Client{}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("send image to %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var receipt ImageReceipt
	if json.Unmarshal(body, &receipt) == nil && receipt.Outcome != "" {
		return &receipt, nil // committed, or refused with the outcome
	}
	var e api.ErrorResponse
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return nil, fmt.Errorf("target %s: %s (%d)", addr, e.Error, resp.StatusCode)
	}
	return nil, fmt.Errorf("target %s: %s", addr, resp.Status)
}

// hashingReader hashes what it reads and calls onEOF once at the end.
type hashingReader struct {
	r     io.Reader
	h     hash.Hash
	onEOF func()
	done  bool
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	if err == io.EOF && !h.done {
		h.done = true
		if h.onEOF != nil {
			h.onEOF()
		}
	}
	return n, err
}

// writeImageTar writes dirs (task name -> image directory) as one tar:
// <task>/<file> for every regular file.
func writeImageTar(w io.Writer, dirs map[string]string) error {
	tw := tar.NewWriter(w)
	for task, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			hdr := &tar.Header{Name: task + "/" + filepath.ToSlash(rel), Mode: 0o600, Size: fi.Size(),
				ModTime: fi.ModTime(), Typeflag: tar.TypeReg}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			return err
		})
		if err != nil {
			return fmt.Errorf("image of task %s: %w", task, err)
		}
	}
	return tw.Close()
}

// readImageTar extracts an image tar under root: root/<task>/<file>, for
// the tasks named in want only, regular files only, no path outside root.
// It returns the bytes written.
func readImageTar(r io.Reader, root string, want map[string]bool, maxBytes int64) (int64, error) {
	tr := tar.NewReader(r)
	var total int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("read image: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return total, fmt.Errorf("image entry %q: only regular files are accepted", hdr.Name)
		}
		clean := filepath.Clean(filepath.FromSlash(hdr.Name))
		task, _, ok := strings.Cut(clean, string(filepath.Separator))
		if !ok || !filepath.IsLocal(clean) || !want[task] {
			return total, fmt.Errorf("image entry %q: not a file of a task of this allocation", hdr.Name)
		}
		if total += hdr.Size; total > maxBytes {
			return total, fmt.Errorf("image larger than %d bytes", maxBytes)
		}
		dst := filepath.Join(root, clean)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return total, err
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return total, fmt.Errorf("image entry %q: %w", hdr.Name, err)
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return total, fmt.Errorf("image entry %q: %w", hdr.Name, err)
		}
	}
}

// readImageBody unpacks the image tar of r's body under root (see
// readImageTar) and checks it against the sender's SHA-256 trailer.
func readImageBody(r *http.Request, root string, want map[string]bool, maxBytes int64) (int64, error) {
	body := &hashingReader{r: r.Body, h: sha256.New()}
	n, err := readImageTar(body, root, want, maxBytes)
	if err != nil {
		return n, fmt.Errorf("receive image: %w", err)
	}
	// The tar ends before the request's body does: the trailer with the
	// digest is read only with the body's end (without this, whether it
	// was there depended on how the last chunks arrived).
	if _, err := io.Copy(io.Discard, io.LimitReader(body, 1<<20)); err != nil {
		return n, fmt.Errorf("receive image: %w", err)
	}
	if got, sent := hex.EncodeToString(body.h.Sum(nil)), r.Trailer.Get(trailerImageSHA256); sent == "" || got != sent {
		return n, fmt.Errorf("image digest %s does not match the sender's %q", got, sent)
	}
	return n, nil
}
