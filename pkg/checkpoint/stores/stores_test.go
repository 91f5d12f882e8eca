package stores

import "testing"

func TestShown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/home/u/.teamrun", "/home/u/.teamrun"},
		{"file:///srv/teamrun", "file:///srv/teamrun"},
		{"postgres://u:s3cret@db:5432/app?sslmode=require", "postgres://u@db:5432/app?sslmode=require"},
		{"postgresql://db/app?password=s3cret&user=u", "postgresql://db/app?user=u"},
		{"postgres://u@db/app", "postgres://u@db/app"},
		{"postgres://u:s3cret@db:port/app", "postgres://…"},
	}
	for _, tt := range tests {
		if got := Shown(tt.in); got != tt.want {
			t.Errorf("Shown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
