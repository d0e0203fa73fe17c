// A loopback TCP proxy for fault tests: relays every connection to a target port until told
// to cut them all (DropAll), as a network blip or a proxy restart does. New connections are
// relayed again at once, so a client that redials finds its server.
#ifndef TENSORD_TESTS_INTEGRATION_TCP_PROXY_H_
#define TENSORD_TESTS_INTEGRATION_TCP_PROXY_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tensord::testing {

class TcpProxy {
 public:
  explicit TcpProxy(int target_port) : target_port_(target_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(listen_fd_, 64) != 0) {
      return;
    }
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~TcpProxy() {
    stopping_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    DropAll();
    std::vector<std::thread> relays;
    {
      std::lock_guard<std::mutex> lock(mu_);
      relays.swap(relays_);
    }
    for (auto& t : relays) t.join();
    close(listen_fd_);
  }

  bool ok() const { return port_ > 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int64_t dropped() const { return dropped_.load(); }

  // Cuts every connection relayed now (both ends see a reset or an end of stream).
  void DropAll() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& pair : pairs_) {
      if (!pair->closed.exchange(true)) {
        shutdown(pair->client, SHUT_RDWR);
        shutdown(pair->server, SHUT_RDWR);
        ++dropped_;
      }
    }
  }

 private:
  struct Pair {
    int client = -1;
    int server = -1;
    std::atomic<bool> closed{false};
  };

  void AcceptLoop() {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      const int server = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(target_port_));
      if (connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        close(client);
        close(server);
        continue;
      }
      const int one = 1;
      setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      auto pair = std::make_shared<Pair>();
      pair->client = client;
      pair->server = server;
      std::lock_guard<std::mutex> lock(mu_);
      pairs_.push_back(pair);
      relays_.emplace_back([this, pair] { Relay(*pair); });
    }
  }

  // Copies bytes both ways until either side ends or the pair is cut.
  void Relay(Pair& pair) {
    char buffer[64 * 1024];
    pollfd fds[2] = {{pair.client, POLLIN, 0}, {pair.server, POLLIN, 0}};
    while (!pair.closed && !stopping_) {
      if (poll(fds, 2, 50) <= 0) continue;
      bool done = false;
      for (int i = 0; i < 2 && !done; ++i) {
        if (fds[i].revents == 0) continue;
        const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
        if (n <= 0) {
          done = true;
          break;
        }
        const int to = i == 0 ? pair.server : pair.client;
        for (ssize_t at = 0; at < n;) {
          // MSG_NOSIGNAL: a peer already gone is an error here, not a SIGPIPE.
          const ssize_t w = send(to, buffer + at, static_cast<size_t>(n - at), MSG_NOSIGNAL);
          if (w <= 0) {
            done = true;
            break;
          }
          at += w;
        }
      }
      if (done) break;
    }
    pair.closed = true;
    std::lock_guard<std::mutex> lock(mu_);
    shutdown(pair.client, SHUT_RDWR);
    shutdown(pair.server, SHUT_RDWR);
    close(pair.client);
    close(pair.server);
    pair.client = pair.server = -1;
  }

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> dropped_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::shared_ptr<Pair>> pairs_;
  std::vector<std::thread> relays_;
};

}  // namespace tensord::testing

#endif  // TENSORD_TESTS_INTEGRATION_TCP_PROXY_H_
