fn main() -> std::process::ExitCode {
    waymark::cli::run()
}
