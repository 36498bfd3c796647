/*
Copyright 2026 The myapp-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// stateFileVersion is bumped whenever the file's shape changes incompatibly.
const stateFileVersion = 1

// stateFile is what Options.StateFile holds: the data, not faults or
// settings, which belong to whoever is running the simulator right now.
type stateFile struct {
	Version      int             `json:"version"`
	NextBackupID int64           `json:"nextBackupID"`
	Records      []*storedRecord `json:"records"`
	Backups      []*storedBackup `json:"backups"`
	// Claims were added after version 1 without a bump: a file without
	// them holds none.
	Claims []*InstallationClaim `json:"claims,omitempty"`
}

// snapshot is the encoded state at one version, taken under s.mu and written
// after it is released.
type snapshot struct {
	version uint64
	data    []byte
}

// Open returns a Server that starts from the data in opts.StateFile, or with
// no data when the file does not exist yet.
func Open(opts Options) (*Server, error) {
	s := New(opts)
	if opts.StateFile == "" {
		return s, nil
	}
	data, err := os.ReadFile(opts.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state file: %w", err)
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("state file %s: %w", opts.StateFile, err)
	}
	if st.Version != stateFileVersion {
		return nil, fmt.Errorf("state file %s has version %d, want %d", opts.StateFile, st.Version, stateFileVersion)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range st.Records {
		if r == nil || r.Name == "" {
			return nil, fmt.Errorf("state file %s holds a record without a name", opts.StateFile)
		}
		s.records[r.Name] = r
	}
	for _, b := range st.Backups {
		if b == nil || b.ID == "" || b.IdempotencyKey == "" {
			return nil, fmt.Errorf("state file %s holds a backup without an ID or key", opts.StateFile)
		}
		s.backups[b.ID] = b
		s.backupKeys[b.IdempotencyKey] = b.ID
	}
	for _, c := range st.Claims {
		if c == nil || c.OwnerID == "" {
			return nil, fmt.Errorf("state file %s holds an installation claim without an owner ID", opts.StateFile)
		}
		s.claims[c.OwnerID] = c
	}
	s.nextBackupID = max(st.NextBackupID, 1)
	return s, nil
}

// snapshotLocked encodes the data for the state file, or returns nothing when
// there is no state file.
func (s *Server) snapshotLocked() snapshot {
	if s.opts.StateFile == "" {
		return snapshot{}
	}
	s.version++
	st := stateFile{Version: stateFileVersion, NextBackupID: s.nextBackupID}
	for _, r := range s.records {
		st.Records = append(st.Records, r)
	}
	for _, b := range s.backups {
		st.Backups = append(st.Backups, b)
	}
	for _, c := range s.claims {
		st.Claims = append(st.Claims, c)
	}
	sort.Slice(st.Claims, func(i, j int) bool { return st.Claims[i].OwnerID < st.Claims[j].OwnerID })
	sort.Slice(st.Records, func(i, j int) bool { return st.Records[i].Name < st.Records[j].Name })
	sort.Slice(st.Backups, func(i, j int) bool { return st.Backups[i].ID < st.Backups[j].ID })
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		s.log.Error(err, "Failed to encode state")
		return snapshot{}
	}
	return snapshot{version: s.version, data: data}
}

// save writes a snapshot unless a newer one was written already. It writes a
// temporary file and renames it, so a crash never leaves half a file behind.
func (s *Server) save(snap snapshot) {
	if snap.data == nil {
		return
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if snap.version <= s.savedVersion {
		return
	}
	if err := writeFileAtomic(s.opts.StateFile, snap.data); err != nil {
		s.log.Error(err, "Failed to save state", "file", s.opts.StateFile)
		return
	}
	s.savedVersion = snap.version
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
