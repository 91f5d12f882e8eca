# bash completion for teamrun. Install: source <(teamrun completion bash)   (e.g. in ~/.bashrc)
#
# The binary is asked `teamrun WORDS… CUR --generate-bash-completion`: the
# words before the cursor, unquoted but never expanded or run (a completion
# runs nothing the line holds: no $(…), no > file), and CUR the word being
# completed when it starts with "-", else "". It answers one candidate a
# line. The candidates are data (a task may be named "$(id)" or "step one"):
# they are filtered by the word's prefix and quoted here, never expanded or
# split.

# _teamrun_unquote WORD sets REPLY to WORD as the shell would read it, its
# quotes and backslashes taken away and nothing expanded but a leading ~/.
_teamrun_unquote() {
  local w=$1 q='' c i
  REPLY=''
  if [[ $w == '~' || $w == '~/'* ]]; then
    w=$HOME${w:1}
  fi
  for ((i = 0; i < ${#w}; i++)); do
    c=${w:i:1}
    if [[ $q == "'" ]]; then
      if [[ $c == "'" ]]; then q=''; else REPLY+=$c; fi
    elif [[ $c == '\' ]]; then
      i=$((i + 1))
      REPLY+=${w:i:1}
    elif [[ $q == '"' ]]; then
      if [[ $c == '"' ]]; then q=''; else REPLY+=$c; fi
    elif [[ $c == "'" || $c == '"' ]]; then
      q=$c
    else
      REPLY+=$c
    fi
  done
}

_teamrun_bash_autocomplete() {
  local cur keep line c i w REPLY
  local -a words args cands
  COMPREPLY=()
  # bash splits --session=ni at "=" and a URL at ":" or "@" (COMP_WORDBREAKS):
  # join them again, as the command reads them.
  for ((i = 0; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((${#words[@]} > 0)) && [[ -n $w && -z ${w//[=:@]/} ]]; then
      words[${#words[@]} - 1]+=$w
      if ((i < COMP_CWORD)); then
        i=$((i + 1))
        words[${#words[@]} - 1]+=${COMP_WORDS[i]}
      fi
    else
      words+=("$w")
    fi
  done
  cur=${words[${#words[@]} - 1]}
  unset 'words[${#words[@]}-1]'
  # A redirection (> out) is no word of the command: it and its target are
  # left out, and its target is a file's name, for bash to complete.
  for ((i = 0; i < ${#words[@]}; i++)); do
    w=${words[i]}
    if [[ -n $w && -z ${w//[<>&0-9]/} && $w == *[\<\>]* ]]; then
      if ((i == ${#words[@]} - 1)); then
        return 0
      fi
      i=$((i + 1))
      continue
    fi
    _teamrun_unquote "$w"
    args+=("$REPLY")
  done
  _teamrun_unquote "$cur"
  c=$REPLY
  if [[ $c == "--" ]]; then
    # "--" itself would end the flags: ask for them all.
    args+=(-)
  elif [[ $c == -* ]]; then
    args+=("$c")
  else
    args+=('')
  fi
  while IFS= read -r w; do # not mapfile: macOS has bash 3
    cands+=("$w")
  done < <("${args[@]}" --generate-bash-completion 2>/dev/null)
  # readline replaces only the text after the last "=", ":" or "@" of the
  # word ($2): what comes before it stays.
  keep=''
  if (($# >= 2)) && [[ $cur == *"$2" ]]; then
    _teamrun_unquote "${cur%"$2"}"
    keep=$REPLY
  fi
  for w in "${cands[@]}"; do
    [[ $w == "$c"* && $w == "$keep"* ]] || continue
    w=${w#"$keep"}
    if [[ $cur == [\'\"]* ]]; then
      COMPREPLY+=("$w") # typed within quotes: bash closes them
    else
      printf -v w '%q' "$w"
      COMPREPLY+=("$w")
    fi
  done
  return 0
}

complete -o bashdefault -o default -F _teamrun_bash_autocomplete teamrun
