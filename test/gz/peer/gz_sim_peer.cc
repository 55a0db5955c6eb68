// A stand-in for a Gazebo Harmonic world, for bb_robot's gazebo backend tests: it plays gz-sim's
// JointPositionController (velocity mode with <cmd_max>: each joint moves towards its latest
// commanded position at up to MAX_VEL) and JointStatePublisher (gz.msgs.Model with the joints'
// own names, positions, velocities and axis limits) over ign-transport 11, the wire protocol of
// gz-transport 13.  Built by test/helpers/cpp_peer.py (ign-transport 11 and ign-msgs 8 from Debian;
// the messages are serialized with ignition.msgs classes, whose field numbers are gz.msgs'.)
//
//   gz_sim_peer STATE_TOPIC MODEL_NAME RATE_HZ MAX_VEL [options] JOINT...
//     JOINT          name,command_topic,lower,upper,initial  (one per joint, in message order)
//     --type-prefix  P: subscribe P.Double, publish P.Model / P.Clock (default gz.msgs)
//     --extra-joint  NAME: also report a joint the driver does not know (always at 0)
//     --clock        TOPIC: publish the simulation time there (P.Clock) at RATE_HZ
//     --record       FILE: for benchmarks, report the last joint's position as k * 1e-6 in the
//                    k-th state message (a sequence number) and write, on exit, "S k t" for each
//                    state published and "C t value" for each change of the first joint's
//                    command received (t: CLOCK_MONOTONIC nanoseconds, as Python's monotonic_ns)
//
// Prints "READY", then "CMD <joint> <value>" for the first command of each joint, and
// "CONNECTED" once a subscriber of the joint states has registered.  Stops when standard input
// closes.  Partition and address come from IGN_PARTITION / IGN_IP.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <ignition/msgs/clock.pb.h>
#include <ignition/msgs/double.pb.h>
#include <ignition/msgs/model.pb.h>
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

struct Joint
{
  std::string name;
  std::string topic;
  double lower = -1e16;
  double upper = 1e16;
  double position = 0.0;
  double velocity = 0.0;
  double command = 0.0;
  bool commanded = false;
};

bool ParseJoint(const std::string &_spec, Joint &_joint)
{
  std::vector<std::string> parts;
  std::stringstream stream(_spec);
  std::string part;
  while (std::getline(stream, part, ','))
    parts.push_back(part);
  if (parts.size() != 5)
    return false;
  _joint.name = parts[0];
  _joint.topic = parts[1];
  _joint.lower = std::atof(parts[2].c_str());
  _joint.upper = std::atof(parts[3].c_str());
  _joint.position = std::atof(parts[4].c_str());
  _joint.command = _joint.position;
  return true;
}
}  // namespace

int main(int _argc, char **_argv)
{
  if (_argc < 6)
  {
    std::cerr << "usage: gz_sim_peer STATE_TOPIC MODEL_NAME RATE_HZ MAX_VEL [--type-prefix P] "
                 "[--extra-joint NAME] [--clock TOPIC] name,topic,lower,upper,initial..."
              << std::endl;
    return 2;
  }
  const std::string stateTopic = _argv[1];
  const std::string modelName = _argv[2];
  const double rate = std::atof(_argv[3]);
  const double maxVelocity = std::atof(_argv[4]);
  std::string prefix = "gz.msgs";
  std::string extraJoint;
  std::string clockTopic;
  std::string recordPath;
  std::vector<Joint> joints;
  for (int i = 5; i < _argc; ++i)
  {
    const std::string arg = _argv[i];
    if ((arg == "--type-prefix" || arg == "--extra-joint" || arg == "--clock" || arg == "--record") &&
        i + 1 < _argc)
    {
      const std::string value = _argv[++i];
      if (arg == "--type-prefix")
        prefix = value;
      else if (arg == "--extra-joint")
        extraJoint = value;
      else if (arg == "--record")
        recordPath = value;
      else
        clockTopic = value;
      continue;
    }
    Joint joint;
    if (!ParseJoint(arg, joint))
    {
      std::cerr << "bad joint spec: " << arg << std::endl;
      return 2;
    }
    joints.push_back(joint);
  }

  ignition::transport::Node node;
  std::mutex stateMutex;
  const bool recording = !recordPath.empty();
  std::vector<std::pair<int64_t, double>> commandChanges;
  std::vector<int64_t> statePublished;
  if (recording)
  {
    commandChanges.reserve(1 << 20);
    statePublished.reserve(1 << 20);
  }
  auto monotonicNs = []()
  {
    return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch()).count());
  };
  const std::string doubleType = prefix + ".Double";
  for (size_t index = 0; index < joints.size(); ++index)
  {
    auto callback = [&, index](const char *_data, const size_t _size,
                               const ignition::transport::MessageInfo &)
    {
      ignition::msgs::Double command;
      if (!command.ParseFromArray(_data, static_cast<int>(_size)))
        return;
      bool first = false;
      {
        std::lock_guard<std::mutex> lock(stateMutex);
        Joint &joint = joints[index];
        first = !joint.commanded;
        if (recording && index == 0 && (first || joint.command != command.data()))
          commandChanges.emplace_back(monotonicNs(), command.data());
        joint.command = command.data();
        joint.commanded = true;
      }
      if (first)
        Say("CMD " + joints[index].name + " " + std::to_string(command.data()));
    };
    if (!node.SubscribeRaw(joints[index].topic, callback, doubleType))
    {
      Say("ERROR subscribe " + joints[index].topic);
      return 1;
    }
  }
  const std::string modelType = prefix + ".Model";
  auto statePublisher = node.Advertise(stateTopic, modelType);
  if (!statePublisher)
  {
    Say("ERROR advertise " + stateTopic);
    return 1;
  }
  ignition::transport::Node::Publisher clockPublisher;
  if (!clockTopic.empty())
    clockPublisher = node.Advertise(clockTopic, prefix + ".Clock");

  std::atomic<bool> done{false};
  std::thread reader([&]()
  {
    std::string line;
    while (std::getline(std::cin, line))
    {
    }
    done = true;
  });
  Say("READY");

  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  const auto period = std::chrono::duration<double>(1.0 / rate);
  auto next = start;
  bool connected = false;
  std::string bytes;
  while (!done)
  {
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
    std::this_thread::sleep_until(next);
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last).count();
    last = now;
    if (now - next > std::chrono::seconds(1))
      next = now;  // far behind (a stalled machine): do not burst
    const double simTime = std::chrono::duration<double>(now - start).count();
    ignition::msgs::Model model;
    model.set_name(modelName);
    model.mutable_header()->mutable_stamp()->set_sec(static_cast<int64_t>(simTime));
    model.mutable_header()->mutable_stamp()->set_nsec(
        static_cast<int32_t>((simTime - std::floor(simTime)) * 1e9));
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      for (Joint &joint : joints)
      {
        // JointPositionController, use_velocity_commands with cmd_max: at most MAX_VEL.
        const double error = joint.command - joint.position;
        const double step = std::clamp(error, -maxVelocity * dt, maxVelocity * dt);
        joint.velocity = dt > 0 ? step / dt : 0.0;
        joint.position = std::clamp(joint.position + step, joint.lower, joint.upper);
        auto *message = model.add_joint();
        message->set_name(joint.name);
        message->mutable_axis1()->set_position(joint.position);
        message->mutable_axis1()->set_velocity(joint.velocity);
        message->mutable_axis1()->set_force(0.0);
        message->mutable_axis1()->set_limit_lower(joint.lower);
        message->mutable_axis1()->set_limit_upper(joint.upper);
      }
    }
    if (!extraJoint.empty())
      model.add_joint()->set_name(extraJoint);
    if (recording && !joints.empty())
    {
      const auto k = static_cast<int64_t>(statePublished.size());
      model.mutable_joint(static_cast<int>(joints.size()) - 1)->mutable_axis1()->set_position(
          static_cast<double>(k) * 1e-6);
      statePublished.push_back(0);
      model.SerializeToString(&bytes);
      statePublished.back() = monotonicNs();
    }
    else
    {
      model.SerializeToString(&bytes);
    }
    statePublisher.PublishRaw(bytes, modelType);
    if (clockPublisher)
    {
      ignition::msgs::Clock clock;
      clock.mutable_sim()->set_sec(static_cast<int64_t>(simTime));
      clock.mutable_sim()->set_nsec(static_cast<int32_t>((simTime - std::floor(simTime)) * 1e9));
      clock.SerializeToString(&bytes);
      clockPublisher.PublishRaw(bytes, prefix + ".Clock");
    }
    if (!connected && statePublisher.HasConnections())
    {
      connected = true;
      Say("CONNECTED");
    }
  }
  reader.join();
  if (recording)
  {
    FILE *file = std::fopen(recordPath.c_str(), "w");
    if (file != nullptr)
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      for (size_t k = 0; k < statePublished.size(); ++k)
        std::fprintf(file, "S %zu %lld\n", k, static_cast<long long>(statePublished[k]));
      for (const auto &change : commandChanges)
        std::fprintf(file, "C %lld %.17g\n", static_cast<long long>(change.first), change.second);
      std::fclose(file);
    }
  }
  return 0;
}
