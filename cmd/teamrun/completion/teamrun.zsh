#compdef teamrun
# zsh completion for teamrun (urfave/cli's zsh_autocomplete, named for teamrun).
# Install: source <(teamrun completion zsh)   (in ~/.zshrc, after compinit)

_teamrun_zsh_autocomplete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "--" ]]; then
    # "--" itself would end the flags: ask for them all.
    opts=("${(@f)$(${words[@]:0:#words[@]-1} - --generate-bash-completion)}")
  elif [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi

  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}

compdef _teamrun_zsh_autocomplete teamrun
