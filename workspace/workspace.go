package workspace

// Workspace is a repository and the store that records it, as Locate and
// Open return it; its methods are what a command does with a workspace.
type Workspace struct {
	Store string // the store directory
	Meta  *Meta  // what the store serves (its store.json)
}

// Locate finds the workspace of dir: the store given (--store), or the
// one whose mount or repository dir is in.
func Locate(store, dir string) (*Workspace, error) {
	s, m, err := find(store, dir)
	if err != nil {
		return nil, err
	}
	return &Workspace{Store: s, Meta: m}, nil
}

// Open returns the workspace whose store is the directory store.
func Open(store string) (*Workspace, error) { return Locate(store, "") }

// Root is the repository the workspace is.
func (w *Workspace) Root() string { return w.Meta.Root }

// Layout names the store's files.
func (w *Workspace) Layout() Layout { return Layout(w.Store) }

// Daemon is the client of the daemon serving the workspace.
func (w *Workspace) Daemon() Client { return DaemonOf(w.Store) }

// Alive reports whether a daemon serves the workspace.
func (w *Workspace) Alive() bool { return DaemonAlive(w.Store) }

// View reads the timeline; a live daemon first records the post-images
// of files still being written.
func (w *Workspace) View() (*View, error) { return openView(w) }

// Flush has a live daemon record what is being written; it reports
// whether one answered.
func (w *Workspace) Flush() (bool, error) { return flush(w.Store) }

// Remotes reads the store's remotes.json.
func (w *Workspace) Remotes() (*Remotes, error) { return LoadRemotes(w.Store) }

// UpdateRemotes changes remotes.json under its lock.
func (w *Workspace) UpdateRemotes(change func(*Remotes) error) (*Remotes, error) {
	return UpdateRemotes(w.Store, change)
}
