// A small C++ peer for bb_robot's gz-transport interop tests, built against ign-transport 11
// (the gz-transport wire protocol of Gazebo Harmonic) by test/helpers/cpp_peer.py.
//
// Raw publishing and subscribing with an explicit type name, so the peer can use Harmonic's
// gz.msgs.* names without linking their message classes:
//
//   gz_peer sub TOPIC TYPE
//       subscribe; print "READY", then "MSG <type> <payload hex>" for each message received
//   gz_peer pub TOPIC TYPE PERIOD_MS
//       advertise; print "READY"; publish the latest payload every PERIOD_MS milliseconds;
//       payloads come from standard input, one hex line each (nothing is sent before the first);
//       print "CONNECTED" once a subscriber has registered (NEW_CONNECTION)
//
// Both stop when standard input closes. Partition and address come from IGN_PARTITION / IGN_IP.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include <ignition/transport/MessageInfo.hh>
#include <ignition/transport/Node.hh>

namespace
{
std::mutex outputMutex;

void Say(const std::string &_line)
{
  std::lock_guard<std::mutex> lock(outputMutex);
  std::cout << _line << std::endl;
}

std::string ToHex(const char *_data, size_t _size)
{
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(_size * 2);
  for (size_t i = 0; i < _size; ++i)
  {
    const auto byte = static_cast<unsigned char>(_data[i]);
    hex.push_back(digits[byte >> 4]);
    hex.push_back(digits[byte & 0xf]);
  }
  return hex;
}

bool FromHex(const std::string &_hex, std::string &_bytes)
{
  if (_hex.size() % 2 != 0)
    return false;
  _bytes.clear();
  for (size_t i = 0; i < _hex.size(); i += 2)
  {
    char *end = nullptr;
    const std::string pair = _hex.substr(i, 2);
    const long value = std::strtol(pair.c_str(), &end, 16);
    if (end != pair.c_str() + 2)
      return false;
    _bytes.push_back(static_cast<char>(value));
  }
  return true;
}

int Subscribe(const std::string &_topic, const std::string &_type)
{
  ignition::transport::Node node;
  auto callback = [](const char *_data, const size_t _size,
                     const ignition::transport::MessageInfo &_info)
  {
    Say("MSG " + _info.Type() + " " + ToHex(_data, _size));
  };
  if (!node.SubscribeRaw(_topic, callback, _type))
  {
    Say("ERROR subscribe");
    return 1;
  }
  Say("READY");
  std::string line;
  while (std::getline(std::cin, line))
  {
  }
  return 0;
}

int Publish(const std::string &_topic, const std::string &_type, int _periodMs)
{
  ignition::transport::Node node;
  auto publisher = node.Advertise(_topic, _type);
  if (!publisher)
  {
    Say("ERROR advertise");
    return 1;
  }
  std::mutex payloadMutex;
  std::string payload;
  bool havePayload = false;
  std::atomic<bool> done{false};
  std::thread reader([&]()
  {
    std::string line;
    while (std::getline(std::cin, line))
    {
      std::string bytes;
      if (!FromHex(line, bytes))
      {
        Say("ERROR hex");
        continue;
      }
      std::lock_guard<std::mutex> lock(payloadMutex);
      payload = bytes;
      havePayload = true;
    }
    done = true;
  });
  Say("READY");
  bool connected = false;
  while (!done)
  {
    if (!connected && publisher.HasConnections())
    {
      connected = true;
      Say("CONNECTED");
    }
    {
      std::lock_guard<std::mutex> lock(payloadMutex);
      if (havePayload)
        publisher.PublishRaw(payload, _type);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(_periodMs));
  }
  reader.join();
  return 0;
}
}  // namespace

int main(int _argc, char **_argv)
{
  const std::string mode = _argc > 1 ? _argv[1] : "";
  if (mode == "sub" && _argc == 4)
    return Subscribe(_argv[2], _argv[3]);
  if (mode == "pub" && _argc == 5)
    return Publish(_argv[2], _argv[3], std::atoi(_argv[4]));
  std::cerr << "usage: gz_peer sub TOPIC TYPE | gz_peer pub TOPIC TYPE PERIOD_MS" << std::endl;
  return 2;
}
