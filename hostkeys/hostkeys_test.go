package hostkeys

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCreateThenReload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	k1, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !k1.Created {
		t.Error("first Load did not report Created")
	}
	if !strings.HasPrefix(k1.Fingerprint, "SHA256:") {
		t.Errorf("fingerprint %q", k1.Fingerprint)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o700 {
		t.Errorf("dir mode %04o, want 0700", got)
	}
	st, err = os.Stat(k1.Path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("key mode %04o, want 0600", got)
	}
	k2, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k2.Created {
		t.Error("second Load reported Created")
	}
	if k1.Fingerprint != k2.Fingerprint {
		t.Errorf("fingerprint changed across restart: %s vs %s", k1.Fingerprint, k2.Fingerprint)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("state dir holds %d entries, want only the key (temp files left?)", len(ents))
	}
}

func TestRefusesReadableKey(t *testing.T) {
	dir := t.TempDir()
	k, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644} {
		if err := os.Chmod(k.Path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %04o: err = %v, want a refusal that says how to fix it", mode, err)
		}
	}
}

func TestRefusesUnparsableKeyAndKeepsIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFile)
	junk := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n-----END OPENSSH PRIVATE KEY-----\n")
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "will not replace") {
		t.Fatalf("err = %v, want refusal", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(junk) {
		t.Error("unparsable key was rewritten")
	}
}

func TestRefusesOpenDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("a world-writable state directory was accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); err == nil {
		t.Error("a key was written into a world-writable directory")
	}
}

func TestRefusesEmptyAndFileAsDir(t *testing.T) {
	if _, err := Load(""); err == nil {
		t.Error("empty dir accepted")
	}
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(f); err == nil {
		t.Error("a regular file accepted as state directory")
	}
}

func TestConcurrentFirstStartsAgree(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	fps := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := Load(dir)
			errs[i] = err
			if err == nil {
				fps[i] = k.Fingerprint
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Load %d: %v", i, errs[i])
		}
		if fps[i] != fps[0] {
			t.Fatalf("concurrent first starts disagree: %s vs %s", fps[i], fps[0])
		}
	}
}
