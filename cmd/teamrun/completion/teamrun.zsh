#compdef teamrun
# zsh completion for teamrun. Install: source <(teamrun completion zsh)   (in ~/.zshrc, after compinit)
#
# The binary is asked with the words before the cursor, unquoted but never
# expanded or run (a completion runs nothing the line holds), and the word
# being completed when it starts with "-", else "" (see the bash script). Its
# answer, one candidate a line, is data: compadd quotes what it inserts.

_teamrun_zsh_autocomplete() {
  local -a opts args
  local cur
  args=("${(@Q)words[1,CURRENT-1]}")
  cur=${(Q)words[CURRENT]}
  if [[ "$cur" == "--" ]]; then
    # "--" itself would end the flags: ask for them all.
    args+=(-)
  elif [[ "$cur" == -* ]]; then
    args+=("$cur")
  else
    args+=('')
  fi
  opts=("${(@f)$("${args[@]}" --generate-bash-completion 2>/dev/null)}")
  opts=("${(@)opts:#}")
  if (( ${#opts} )); then
    # _describe reads VALUE:DESCRIPTION: a ":" in a value is escaped.
    opts=("${(@)opts//:/\\:}")
    _describe 'values' opts
  else
    _files
  fi
}

compdef _teamrun_zsh_autocomplete teamrun
