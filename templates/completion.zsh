#compdef torchfix
# zsh completion for torchfix: `torchfix completions zsh` prints this file,
# and packages install it as share/zsh/site-functions/_torchfix.
# The words come from the binary (`torchfix __complete WORD...`), which reads
# them from its command definitions: commands, options, --gpu names.
_torchfix() {
  local -a names shown
  local line
  for line in "${(@f)$(command ${words[1]} __complete "${(@Q)words[2,CURRENT]}" 2>/dev/null)}"; do
    [[ -n $line ]] || continue
    names+=("${line%%$'\t'*}")
    shown+=("${line%%$'\t'*}  -- ${line#*$'\t'}")
  done
  if (( ${#names} )); then
    compadd -l -d shown -a names
  else
    _files
  fi
}
if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
  _torchfix "$@"
else
  compdef _torchfix torchfix
fi
