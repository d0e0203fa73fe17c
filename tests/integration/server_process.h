// Starts a real `tensord` process on a free loopback port, for integration tests.
#ifndef TENSORD_TESTS_INTEGRATION_SERVER_PROCESS_H_
#define TENSORD_TESTS_INTEGRATION_SERVER_PROCESS_H_

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace tensord::testing {

class ServerProcess {
 public:
  // Starts build/tensord with --listen=127.0.0.1:0 and `flags`; waits for its "listening" line.
  explicit ServerProcess(std::vector<std::string> flags = {}) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<std::string> args = {TENSORD_BINARY, "--listen=127.0.0.1:0"};
      args.insert(args.end(), flags.begin(), flags.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(TENSORD_BINARY, argv.data());
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    char line[512];
    while (stdout_ && std::fgets(line, sizeof(line), stdout_)) {
      std::string s(line);
      const auto at = s.find("listening on ");
      if (at != std::string::npos) {
        const auto colon = s.find(':', at + 13);
        port_ = std::stoi(s.substr(colon + 1));
        break;
      }
    }
  }

  ~ServerProcess() {
    if (pid_ > 0 && !stopped_) Stop();
    if (stdout_) std::fclose(stdout_);
  }

  int port() const { return port_; }
  bool ok() const { return port_ > 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::shared_ptr<grpc::Channel> Channel() const {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    return grpc::CreateCustomChannel(address(), grpc::InsecureChannelCredentials(), args);
  }

  // SIGTERM, then the exit status (-1 if it did not exit normally).
  int Stop() {
    stopped_ = true;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Whether the process is still running.
  bool Alive() const { return pid_ > 0 && !stopped_ && kill(pid_, 0) == 0; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  bool stopped_ = false;
  FILE* stdout_ = nullptr;
};

}  // namespace tensord::testing

#endif  // TENSORD_TESTS_INTEGRATION_SERVER_PROCESS_H_
