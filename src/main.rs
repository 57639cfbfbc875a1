fn main() -> std::process::ExitCode {
    fabricopt::cli::main()
}
