
# What only teamrun knows (session ids, the task names of the FILE on the
# line, a flag's choices) comes from the binary itself; where it has nothing
# to offer, fish completes files. The binary is asked with the words before
# the cursor (fish unquotes them and runs nothing they hold) and "" for the
# word being completed (see the bash script); its answer, one value a line,
# is data: fish quotes what it inserts.
function __fish_teamrun_values
    set -l cur (commandline -ct)
    set -l words (commandline -opc)
    if string match -q -- '-*=*' $cur
        # --session=ni: the value of --session
        set -a words (string split -m1 = -- $cur)[1]
    else if string match -q -- '-*' $cur
        return # flags come from the entries above
    end
    $words '' --generate-bash-completion 2>/dev/null
end
complete -c teamrun -n 'not __fish_teamrun_no_subcommand; and __fish_teamrun_values | string length -q' -f -a '(__fish_teamrun_values)'
# Flags whose values teamrun knows:
