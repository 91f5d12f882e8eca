package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// ProjectKey names a project in the database: TEAMRUN_PROJECT when set
// (so pods that mount the spec at different paths share one project), else
// the spec folder's absolute path. A value of only spaces is unset, as an
// empty one is (a variable quoted but left blank): no project is named so.
func ProjectKey(specDir string) (string, error) {
	if k := os.Getenv("TEAMRUN_PROJECT"); strings.TrimSpace(k) != "" {
		return k, nil
	}
	abs, err := filepath.Abs(specDir)
	if err != nil {
		return "", fmt.Errorf("the project folder %s: %w; set TEAMRUN_PROJECT to name the project", specDir, err)
	}
	return abs, nil
}

// projectOf is the key of the project a session of specPath is started
// in: the ProjectKey of its spec's folder, as the run's Project has it;
// nil (not known) without a spec path.
func projectOf(specPath string) *string {
	if specPath == "" {
		return nil
	}
	key, err := ProjectKey(filepath.Dir(specPath))
	if err != nil {
		return nil
	}
	return &key
}

// Project is a project's active session and audit log kept in the
// database under its key, so the spec folder may be read-only.
type Project struct {
	store *Store
	dir   string
	key   string

	mu  sync.Mutex
	row string // the key its rows are under (rowKey); "" until looked up
}

var _ checkpoint.ProjectState = (*Project)(nil)

// Project is the state of the project whose spec folder is dir, under its
// ProjectKey.
func (s *Store) Project(dir string) checkpoint.ProjectState {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // as the file store's project: messages name the folder absolutely
	}
	key, err := ProjectKey(dir)
	if err != nil {
		key = dir
	}
	return &Project{store: s, dir: dir, key: key}
}

// Dir is the project's spec folder.
func (p *Project) Dir() string { return p.dir }

// Key is the project's key.
func (p *Project) Key() string { return p.key }

// Where names the project's row in messages.
func (p *Project) Where() string {
	p.mu.Lock()
	key := cmp.Or(p.row, p.key)
	p.mu.Unlock()
	return fmt.Sprintf("%s (%s.projects, project %s)", p.store.cfg.location, p.store.cfg.schema, key)
}

// rowKey is the key the project's rows (its active session, its audit
// records) are under: its own key when rows are under it, or when
// TEAMRUN_PROJECT named it; else the key of the rows of this very folder
// reached by another path (checkpoint.SamePath: through a symbolic link,
// or the link's target), which a run given that path wrote first; else its
// own. The key stays the path a run was given, not the folder a link
// points to: a link that a deploy points at each new release keeps its
// project.
func (p *Project) rowKey(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.row != "" {
		return p.row, nil
	}
	if p.key != p.dir {
		p.row = p.key
		return p.row, nil
	}
	ctx, cancel := p.store.bounded(ctx)
	defer cancel()
	// Its own first, then the others newest first. Only a project with
	// no rows of its own pays for the look-up of every key here: a
	// project's first run, or its folder's first through another path.
	rows, err := p.store.pool.Query(ctx, p.store.q(`SELECT project_key FROM {s}.projects
		ORDER BY project_key = $1 DESC, updated_at DESC`), p.key)
	if err != nil {
		return "", p.store.cfg.fail("read the projects' keys", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", p.store.cfg.fail("read the projects' keys", err)
	}
	p.row = p.key
	for _, k := range keys {
		if checkpoint.SamePath(k, p.dir) {
			p.row = k
			break
		}
	}
	return p.row, nil
}

var _ checkpoint.ActiveIndex = (*Store)(nil)

// ActiveSessions maps every project's active session to the project's key.
func (s *Store) ActiveSessions(ctx context.Context) (map[string]string, error) {
	if none, err := s.empty(ctx); none || err != nil {
		return map[string]string{}, err
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, s.q(`SELECT active_session, project_key FROM {s}.projects`))
	if err != nil {
		return nil, s.cfg.fail("read the projects' active sessions", err)
	}
	m := map[string]string{}
	var id, key string
	if _, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error { m[id] = key; return nil }); err != nil {
		return nil, s.cfg.fail("read the projects' active sessions", err)
	}
	return m, nil
}

// Active is the project's active session id, "" when none is set.
func (p *Project) Active(ctx context.Context) (string, error) {
	if none, err := p.store.empty(ctx); none || err != nil {
		return "", err
	}
	key, err := p.rowKey(ctx)
	if err != nil {
		return "", err
	}
	var id string
	ctx, cancel := p.store.bounded(ctx)
	defer cancel()
	err = p.store.pool.QueryRow(ctx, p.store.q(`SELECT active_session FROM {s}.projects WHERE project_key = $1`), key).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", p.store.cfg.fail("read the active session of project "+key, err)
	}
	return id, nil
}

// SetActive makes id the project's active session.
func (p *Project) SetActive(ctx context.Context, id string) error {
	if err := checkpoint.ValidateID(id); err != nil {
		return err
	}
	if err := p.store.ready(ctx); err != nil {
		return err
	}
	key, err := p.rowKey(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := p.store.bounded(ctx)
	defer cancel()
	_, err = p.store.pool.Exec(ctx, p.store.q(`INSERT INTO {s}.projects (project_key, active_session, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (project_key) DO UPDATE SET active_session = excluded.active_session, updated_at = excluded.updated_at`), key, id)
	if err != nil {
		return p.store.cfg.fail("set the active session of project "+key, err)
	}
	return nil
}

// ClaimActive makes id the project's active session if it is still prev
// ("" for none), in one transaction: the upsert sets the row only when it
// names prev and locks it either way (a concurrent claim's insert is waited
// for), so the read after it sees the row as this claim left it.
func (p *Project) ClaimActive(ctx context.Context, prev, id string) (string, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return "", err
	}
	if err := p.store.ready(ctx); err != nil {
		return "", err
	}
	key, err := p.rowKey(ctx)
	if err != nil {
		return "", err
	}
	cur := id
	err = pgx.BeginFunc(ctx, p.store.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, p.store.q(`INSERT INTO {s}.projects AS p (project_key, active_session, updated_at) VALUES ($1, $2, now())
			ON CONFLICT (project_key) DO UPDATE SET active_session = excluded.active_session, updated_at = excluded.updated_at
			WHERE p.active_session = $3`), key, id, prev)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		return tx.QueryRow(ctx, p.store.q(`SELECT active_session FROM {s}.projects WHERE project_key = $1`), key).Scan(&cur)
	})
	if err != nil {
		return "", p.store.cfg.fail("set the active session of project "+key, err)
	}
	return cur, nil
}

// Audit appends rec, its time, pid and user filled in when zero, as the
// file log does; it returns once committed.
func (p *Project) Audit(ctx context.Context, rec checkpoint.AuditRecord) error {
	if err := p.store.ready(ctx); err != nil {
		return err
	}
	rec.Fill()
	key, err := p.rowKey(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := p.store.bounded(ctx)
	defer cancel()
	_, err = p.store.pool.Exec(ctx, p.store.q(`INSERT INTO {s}.audit (project_key, at, event, session_id, store, pid, username, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`), key, rec.Time, rec.Event, rec.Session, rec.Store, rec.PID, rec.User, rec.Detail)
	if err != nil {
		return p.store.cfg.fail("write the audit of project "+key, err)
	}
	return nil
}

// AuditRecords is the project's audit log, oldest first.
func (p *Project) AuditRecords(ctx context.Context) ([]checkpoint.AuditRecord, error) {
	if none, err := p.store.empty(ctx); none || err != nil {
		return nil, err
	}
	key, err := p.rowKey(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := p.store.pool.Query(ctx, p.store.q(`SELECT at, event, session_id, store, pid, username, detail
		FROM {s}.audit WHERE project_key = $1 ORDER BY id`), key)
	if err != nil {
		return nil, p.store.cfg.fail("read the audit of project "+key, err)
	}
	recs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (checkpoint.AuditRecord, error) {
		var rec checkpoint.AuditRecord
		err := r.Scan(&rec.Time, &rec.Event, &rec.Session, &rec.Store, &rec.PID, &rec.User, &rec.Detail)
		rec.Time = rec.Time.UTC()
		return rec, err
	})
	if err != nil {
		return nil, p.store.cfg.fail("read the audit of project "+key, err)
	}
	return recs, nil
}
