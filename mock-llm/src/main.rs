//! `mock-llm [--port PORT]`: the mock LLM server as a process, scripted over HTTP (see the
//! library's documentation for the `/_mock/*` control API).

fn main() {
    let mut port = 8089u16;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--port", Some(value)) => match value.parse() {
                Ok(value) => port = value,
                Err(_) => usage(&format!("--port takes a number, not {value:?}")),
            },
            _ => usage(&format!("unknown argument {arg:?}")),
        }
    }
    let mock = match mock_llm::MockLlm::start_on(([127, 0, 0, 1], port).into()) {
        Ok(mock) => mock,
        Err(error) => {
            eprintln!("mock-llm: cannot listen on 127.0.0.1:{port}: {error}");
            std::process::exit(1);
        }
    };
    println!("mock-llm listening on {}", mock.base_url());
    mock.wait();
}

fn usage(problem: &str) -> ! {
    eprintln!("mock-llm: {problem}\nusage: mock-llm [--port PORT]");
    std::process::exit(2);
}
